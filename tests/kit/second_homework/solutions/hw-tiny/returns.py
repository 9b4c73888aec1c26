"""Дисконтированная отдача эпизода."""


def discounted_return(rewards, gamma):
    """G_0 = Σ_t γ^t r_t.

    rewards: награды эпизода r_0 … r_{T-1} [T]; gamma: коэффициент дисконтирования γ. Возвращает float.
    """
    # BEGIN SOLUTION
    G = 0.0
    for r in reversed(list(rewards)):  # G_t = r_t + γ G_{t+1}
        G = float(r) + gamma * G
    return G
    # END SOLUTION
