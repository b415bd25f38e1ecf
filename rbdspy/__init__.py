"""rbdspy: ReasoningBank as a DSPy program."""
