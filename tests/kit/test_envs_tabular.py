"""The provided tabular environments of envs.py (grid worlds as (P, R), the random walk) behave as documented.

They are not graded, but the graded parts `dp` and `mc_td` pin the textbook's numbers on them, so a
broken environment would show up as a wrong reference there; these tests say where the fault is.
"""
import importlib.util

import numpy as np
import pytest

from grader.base.homeworks import ROOT
from kit import HW


def _load_envs():
    spec = importlib.util.spec_from_file_location("envs_under_test", ROOT / "solutions" / HW / "envs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


envs = _load_envs()


@pytest.mark.parametrize("factory", ["gridworld_5x5", "gridworld_4x4", "gridworld_4x3"])
def test_grid_world_exports_a_valid_mdp(factory):
    world = getattr(envs, factory)()
    P, R = world.to_mdp()
    S = world.n_states
    assert P.shape == (S, 4, S) and R.shape == (S, 4)
    assert np.all(P >= 0) and np.allclose(P.sum(axis=2), 1.0)
    for s in np.flatnonzero(world.terminal_states):  # absorbing with zero reward
        assert np.all(P[s, :, s] == 1.0) and np.all(R[s] == 0.0)
    P[0, 0, 0] += 1.0  # to_mdp hands out copies
    assert np.allclose(world.to_mdp()[0].sum(axis=2), 1.0)


def test_text_map_walls_terminals_teleports_and_bumps():
    world = envs.GridWorld("""
        S . #
        . A G
        a . X
    """, terminals={"G": 2.0, "X": -3.0}, teleports={"A": ("a", 7.0)}, step_reward=-0.5, bump_reward=-1.0)
    assert world.n_states == 8  # nine cells, one wall
    s = world.state_of
    P, R = world.to_mdp()
    start = s[(0, 0)]
    assert world.start_state == start
    assert P[start, 0, start] == 1.0 and R[start, 0] == -1.0  # up: off the grid, stay, pay bump_reward
    assert P[s[(0, 1)], 1, s[(0, 1)]] == 1.0 and R[s[(0, 1)], 1] == -1.0  # right: into the wall
    assert P[start, 2, s[(1, 0)]] == 1.0 and R[start, 2] == -0.5  # down: an ordinary move
    assert np.all(P[s[(1, 1)], :, s[(2, 0)]] == 1.0) and np.all(R[s[(1, 1)]] == 7.0)  # A → a with +7 for any action
    assert P[s[(2, 1)], 1, s[(2, 2)]] == 1.0 and R[s[(2, 1)], 1] == -0.5 - 3.0  # into X: step reward + its reward
    assert P[s[(0, 1)], 2, s[(1, 1)]] == 1.0 and R[s[(0, 1)], 2] == -0.5  # stepping onto A is an ordinary move


def test_slippery_world_expected_rewards_and_sampling():
    world = envs.gridworld_4x3()
    P, R = world.to_mdp()
    s = world.state_of
    below_goal = s[(1, 2)]
    # up from (1, 2): 0.8 into G (−0.04 + 1), 0.1 left to (1, 1) = wall (stay, −0.04), 0.1 right into X (−0.04 − 1)
    assert np.isclose(P[s[(0, 2)], 1, s[(0, 3)]], 0.8)
    assert np.isclose(R[below_goal, 0], 0.8 * -0.04 + 0.1 * -0.04 + 0.1 * -1.04)
    world.reset(seed=0)
    counts = np.zeros(world.n_states)
    for _ in range(4000):
        world.state = s[(0, 2)]
        s_next, reward, terminated, truncated, _ = world.step(1)
        counts[s_next] += 1
        assert terminated == (s_next == s[(0, 3)]) and truncated is False
        assert np.isclose(reward, -0.04 + (1.0 if s_next == s[(0, 3)] else 0.0))
    assert np.allclose(counts / counts.sum(), P[s[(0, 2)], 1], atol=0.03)


def test_gymnasium_style_api_and_printing():
    world = envs.gridworld_5x5()
    assert world.observation_space.n == 25 and world.action_space.n == 4
    obs, info = world.reset(seed=3)
    assert obs == world.start_state and info == {}
    obs, reward, terminated, truncated, info = world.step(3)  # left from the corner: bump
    assert (obs, reward, terminated, truncated) == (0, -1.0, False, False)
    assert world.step(1) == (1, 0.0, False, False, {})
    assert world.step(2)[:2] == (21, 10.0)  # from A anything goes to A′ with +10
    values = world.format_values(np.arange(25.0), digits=0).splitlines()
    assert len(values) == 5 and values[0].split() == ["0", "1", "2", "3", "4"]
    policy = np.zeros((25, 4))
    policy[:, 1] = 1.0
    policy[5] = 0.5  # a uniform row shows every arrow
    lines = world.format_policy(policy).splitlines()
    assert lines[0].split() == ["→", "A", "→", "B", "→"] and lines[1].split()[0] == "↑→↓←"
    walled = envs.GridWorld(". # .", terminals={})
    assert walled.format_values([1.0, 2.0]).split() == ["1.0", "#", "2.0"]


def test_random_walk_episodes():
    walk = envs.RandomWalk()
    assert walk.observation_space.n == 7 and walk.action_space.n == 1
    assert np.allclose(walk.true_values(), [0, 1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 0])
    episodes = envs.random_walk_episodes(200, seed=7)
    assert episodes == envs.random_walk_episodes(200, seed=7)
    assert episodes != envs.random_walk_episodes(200, seed=8)
    right = 0
    for episode in episodes:
        assert episode[0][0] == 3
        for (s, r, s_next, terminated), nxt in zip(episode, episode[1:] + [None]):
            assert abs(s_next - s) == 1 and terminated == (s_next in (0, 6))
            assert r == (1.0 if s_next == 6 else 0.0)
            if nxt is not None:
                assert nxt[0] == s_next and not terminated
        assert episode[-1][3]
        right += episode[-1][2] == 6
    assert 0.4 < right / len(episodes) < 0.6  # from the middle, both exits are equally likely
    assert envs.RandomWalk(19).true_values()[10] == pytest.approx(0.5)
