"""The graded suites of s6-hw00-rl-foundations receive each part's module as a fixture.

Which implementation that is (the student's homework/, solutions/, a folder or a notebook) is
decided by the grader (`--impl`, see grader/grading/plugin.py); a test never imports it by name.
"""
from grader.grading.plugin import module_fixture

ppo = module_fixture("ppo")
control = module_fixture("control")
policy_gradient = module_fixture("policy_gradient")
envs = module_fixture("envs")
dp = module_fixture("dp")
mc_td = module_fixture("mc_td")
boss = module_fixture("boss")
toy_lm = module_fixture("toy_lm")
