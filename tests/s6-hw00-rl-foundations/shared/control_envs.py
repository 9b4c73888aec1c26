"""The control part's test environments (Gymnasium toy-text API), recording what the agent does.

They live apart from test_control.py so that the worker running a student's q_learning can import them without
importing pytest: an environment passed to a student's function is pickled to the worker and its method calls are
replayed here (grader/boundary/session.py).
"""
import numpy as np

from grader.grading.checks import check_that


class _Space:
    def __init__(self, n):
        self.n = n
        self._rng = np.random.default_rng(n)

    def sample(self):  # not needed by the algorithms, present for API completeness
        return int(self._rng.integers(self.n))


class Recorder:
    """Wraps an environment and logs each episode as a list of (s, a, r, s_next, terminated, truncated), and the seed
    each episode's reset was given (``seeds``)."""

    def __init__(self, env):
        self.env = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.episodes = []
        self.seeds = []
        self._s = None

    def reset(self, seed=None, options=None):
        s, info = self.env.reset(seed=seed)
        self.episodes.append([])
        self.seeds.append(seed if seed is None else int(seed))
        self._s = int(s)
        return s, info

    def step(self, action):
        check_that(self.episodes != [], what="эпизод начинается с env.reset()",
                   expected="env.reset() перед первым env.step()", got="step без reset")
        s_next, r, terminated, truncated, info = self.env.step(action)
        self.episodes[-1].append((self._s, int(action), float(r), int(s_next), bool(terminated), bool(truncated)))
        self._s = int(s_next)
        return s_next, r, terminated, truncated, info


class Fork:
    """The fork: start 0 → fork 1 (reward 0); at the fork action 0 ends with +2, action 1 ends with −2.

    State 2 is the terminal one. The first episode starts at the fork itself, the next ones at 0.
    """

    def __init__(self):
        self.observation_space, self.action_space = _Space(3), _Space(2)
        self.n_resets = 0
        self.s = 0

    def reset(self, seed=None, options=None):
        self.s = 1 if self.n_resets == 0 else 0
        self.n_resets += 1
        return self.s, {}

    def step(self, action):
        if self.s == 0:
            self.s = 1
            return 1, 0.0, False, False, {}
        self.s = 2
        return 2, (2.0 if int(action) == 0 else -2.0), True, False, {}


class TimeLimitFork:
    """Start 0 → fork 1 → end. At the fork action 0 gives +2, action 1 gives +1, and the episode terminates;
    the observation after it is the start 0, an ordinary state with its own Q (termination belongs to the step).
    Episodes 1 and 3 start at the fork; episode 2 starts at 0 and its one-step time limit cuts it on arriving
    at the fork (truncated = True, the fork is not terminal)."""

    def __init__(self):
        self.observation_space, self.action_space = _Space(2), _Space(2)
        self.n_resets = 0
        self.s = 1

    def reset(self, seed=None, options=None):
        self.s = 0 if self.n_resets == 1 else 1
        self.n_resets += 1
        return self.s, {}

    def step(self, action):
        if self.s == 0:
            self.s = 1
            return 1, 0.0, False, True, {}
        self.s = 0
        return 0, (2.0 if int(action) == 0 else 1.0), True, False, {}


class OneStateBandit:
    """One state, three actions, one-step episodes: action 0 gives +1, actions 1 and 2 give −1 (terminated).
    Once action 0 has been tried it is the only greedy action, so the share of other actions shows ε."""

    def __init__(self):
        self.observation_space, self.action_space = _Space(1), _Space(3)

    def reset(self, seed=None, options=None):
        return 0, {}

    def step(self, action):
        return 0, (1.0 if int(action) == 0 else -1.0), True, False, {}


class RandomMDP:
    """A random MDP in which termination belongs to a transition, not to a state: the observation after
    `terminated` is an ordinary state with its own learned Q, so bootstrapping from it is visible."""

    def __init__(self, seed, n_states=6, n_actions=3, p_end=0.15, max_steps=None, both_flags=False):
        rng = np.random.default_rng(seed)
        self.observation_space, self.action_space = _Space(n_states), _Space(n_actions)
        self.next = rng.integers(n_states, size=(n_states, n_actions, 2))
        self.reward = np.round(rng.normal(size=(n_states, n_actions)), 2)
        self.rng = np.random.default_rng(seed + 1000)
        self.p_end, self.max_steps = p_end, max_steps
        self.both_flags = both_flags  # the time limit may fall on the step that ends the task: both flags True
        self.s, self.t = 0, 0

    def reset(self, seed=None, options=None):
        self.s, self.t = int(self.rng.integers(self.observation_space.n)), 0
        return self.s, {}

    def step(self, action):
        s, a = self.s, int(action)
        self.s = int(self.next[s, a, int(self.rng.random() < 0.5)])
        self.t += 1
        terminated = bool(self.rng.random() < self.p_end)
        truncated = self.max_steps is not None and self.t >= self.max_steps and (self.both_flags or not terminated)
        return self.s, float(self.reward[s, a]), terminated, truncated, {}
