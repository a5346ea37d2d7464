"""`localize` (`behaviours/localize.py`) and OBJECT_NOT_FOUND: an object the cameras have not
seen fails the leaf that needs it with that code, and looking again from the start pose (the
`unseen` safety rule's recovery) finds it."""

from __future__ import annotations

from tests.trees.harness import (
    BOWL,
    BOXES,
    EEF,
    FAILURE,
    SUCCESS,
    compile_node,
    run,
    statuses,
)
from tether.blackboard.episode import storage
from tether.blackboard.world import ObjectNotFound
from tether.scenes.kinematic import KinematicScene
from tether.scenes.robot import Pose


class ArmInTheWay(KinematicScene):
    """A camera's view of the test table: the bowl is hidden while the hand is lower than 25 cm,
    and known only once a look has seen it."""

    def __init__(self) -> None:
        super().__init__(BOXES, goal=[], eef=EEF)
        self.seen: set[str] = set()
        self.looks = 0

    def look(self) -> list[str]:
        self.looks += 1
        if self.eef_pose().pos[2] >= 0.25:
            self.seen.add(BOWL)
        return [] if BOWL in self.seen else [BOWL]

    def pose_of(self, name: str) -> Pose:
        if name == BOWL and BOWL not in self.seen:
            raise ObjectNotFound(name, f"'{name}' is not seen by agentview")
        return super().pose_of(name)


LOWER = "{name: lower, move_to: {target: {relative: [0, 0, -0.12]}, tolerance: 0.01}}"


def test_a_target_never_seen_fails_the_leaf_with_object_not_found(tmp_path):
    robot = ArmInTheWay()
    root = compile_node(tmp_path, f"""
        sequence:
          name: go
          children:
            - {LOWER}
            - name: to the bowl
              move_to: {{object: {BOWL}, offset: [0, 0, 0.1]}}
        """, robot)
    result, frames = run(root, robot)
    assert statuses(frames, "to the bowl")[-1] == FAILURE
    assert [e["code"] for e in result.errors] == ["OBJECT_NOT_FOUND"]
    assert result.errors[0]["message"] == f"'{BOWL}' is not seen by agentview"


def test_localize_here_fails_while_hidden_and_from_the_start_pose_finds_it(tmp_path):
    robot = ArmInTheWay()
    root = compile_node(tmp_path, f"""
        sequence:
          name: go
          children:
            - {LOWER}
            - selector:
                name: look
                children:
                  - localize: here
                  - localize: start
        """, robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert FAILURE in statuses(frames, "localize from here")
    assert statuses(frames, "localize from start")[-1] == SUCCESS
    assert storage()["/errors/history"][0]["code"] == "OBJECT_NOT_FOUND"
    assert robot.eef_pose().pos[2] >= 0.28  # it went back up to look
    assert robot.seen == {BOWL}


def test_the_unseen_recovery_looks_again_and_resumes_the_step(tmp_path):
    robot = ArmInTheWay()
    root = compile_node(tmp_path, f"""
        sequence:
          name: go
          children:
            - {LOWER}
            - selector:
                name: look again when not seen
                children:
                  - name: to the bowl
                    move_to: {{object: {BOWL}, offset: [0, 0, 0.1], tolerance: 0.01}}
                  - sequence:
                      - error_is: OBJECT_NOT_FOUND
                      - localize: start
                      - name: to the bowl again
                        move_to: {{object: {BOWL}, offset: [0, 0, 0.1], tolerance: 0.01}}
        """, robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert statuses(frames, "to the bowl again")[-1] == SUCCESS
    assert abs(robot.eef_pose().pos[0] - BOXES[BOWL][0][0]) < 0.01
