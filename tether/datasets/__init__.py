"""Datasets: demonstrations collected by driving the robot through trees, as LeRobotDatasets."""
