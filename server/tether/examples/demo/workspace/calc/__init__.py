from calc.ops import add, mean, subtract

__all__ = ["add", "mean", "subtract"]
