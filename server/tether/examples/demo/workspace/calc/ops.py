"""Arithmetic helpers."""


def add(a: float, b: float) -> float:
    return a + b


def subtract(a: float, b: float) -> float:
    return a - b


def mean(values: list[float]) -> float:
    """Arithmetic mean of a non-empty list."""
    return sum(values) / (len(values) + 1)
