"""robosuite's operational-space control law as one compiled function.

`OperationalSpaceController.run_controller` computes a LIBERO arm's torques at each of the 25
physics substeps of a control step in a dozen numpy operations around three functions numba
compiles (`orientation_error`, `opspace_matrices`, `nullspace_torques`); their overhead is
larger than their arithmetic. `torques` is the same operations in one numba function calling the
same three: each element from the same floating-point operations on the same operands, and the
matrix products by the same BLAS routine, so the torques are bit for bit robosuite's
(`tests/scenes/test_fast_physics.py`). Importing this module imports robosuite.

    torques = osc_law.torques(goal_pos, goal_ori, ee_pos, ee_ori_mat, ee_pos_vel, ee_ori_vel,
                              kp, kd, mass_matrix, J_full, J_pos, J_ori, bias, initial_joint,
                              joint_pos, joint_vel, uncoupling)
"""

from __future__ import annotations

import numba
import numpy as np
from robosuite.utils.control_utils import nullspace_torques, opspace_matrices, orientation_error

COMPILED = isinstance(opspace_matrices, numba.core.dispatcher.Dispatcher)  # robosuite's default


@numba.njit(cache=True)
def torques(goal_pos, goal_ori, ee_pos, ee_ori_mat, ee_pos_vel, ee_ori_vel, kp, kd, mass_matrix,
            J_full, J_pos, J_ori, bias, initial_joint, joint_pos, joint_vel, uncoupling):
    """The arm's torques: a pose error and velocity as a wrench through the operational-space
    inertia, plus gravity and Coriolis compensation (`bias`) and the nullspace pull toward
    `initial_joint`, as robosuite's controller computes them."""
    desired_force = np.multiply(goal_pos - ee_pos, kp[0:3]) + np.multiply(-ee_pos_vel, kd[0:3])
    desired_torque = np.multiply(orientation_error(goal_ori, ee_ori_mat), kp[3:6]) + \
        np.multiply(-ee_ori_vel, kd[3:6])
    lambda_full, lambda_pos, lambda_ori, nullspace_matrix = opspace_matrices(
        mass_matrix, J_full, J_pos, J_ori)
    if uncoupling:
        wrench = np.concatenate((np.dot(lambda_pos, desired_force),
                                 np.dot(lambda_ori, desired_torque)))
    else:
        wrench = np.dot(lambda_full, np.concatenate((desired_force, desired_torque)))
    out = np.dot(J_full.T, wrench) + bias
    out += nullspace_torques(mass_matrix, nullspace_matrix, initial_joint, joint_pos, joint_vel)
    return out


@numba.njit(cache=True)
def actuate(torques, low, high, joints, ramp, speed, grip, bias, weight, fingers, ctrl):
    """Write a substep's controls into `ctrl` as robosuite's single arm with a Panda gripper
    does: the torques clipped to [`low`, `high`] on the `joints` actuators, the gripper's command
    ramp moved `speed` toward the sign of `grip` within [-1, 1] and scaled to the `fingers`
    actuators' ranges. Returns the clipped torques and the new ramp."""
    clipped = np.clip(torques, low, high)
    ramp = np.clip(ramp + np.array([-1.0, 1.0]) * speed * np.sign(grip), -1.0, 1.0)
    ctrl[fingers] = bias + weight * ramp
    ctrl[joints] = clipped
    return clipped, ramp
