"""The chapters' experiments, apart from the model."""

__all__: list[str] = []
