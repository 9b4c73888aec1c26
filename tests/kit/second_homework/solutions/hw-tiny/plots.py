"""Таблица тетрадки (готовый код): отдача робота-курьера при разных γ."""


def by_gamma(discounted_return, rewards=(1.0, 0.0, 2.0), gammas=(0.0, 0.5, 0.9, 1.0)) -> None:
    """Печатает G_0 робота-курьера для каждого γ из gammas."""
    for gamma in gammas:
        print(f"γ = {gamma:g}: G_0 = {discounted_return(list(rewards), gamma):.3f}")
