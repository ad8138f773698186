"""ptbank: a verified, bilingual PyTorch interview question bank and the pipeline that prints it."""

__version__ = "0.1.0"
