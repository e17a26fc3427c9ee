"""Real hardware, any model: the step-time model the LLM engine and ``contention step`` share.

A library beside the topics (no topic.toml; core never imports it), standard library only:

``gpus.gpu(name) -> Gpu``
    A GPU from its datasheet (``gpus.toml``: A100-40GB A100-80GB H100-80GB H200 A40 L40S B200 MI300X).
``config.model_shape(spec) -> ModelShape``
    A model from a Hugging Face ``config.json`` (a shipped name in ``models/``, a path, or a table of
    its fields): parameters, FLOPs per token, KV bytes per token per architecture (GQA, MLA,
    sliding windows, FP8 KV), experts, dtypes (``shape.py``).
``step.StepModel(gpu, shape, tp)``
    One replica's step time: ``parts(...)`` (linear, attention, communication, overhead) and
    ``step_time(...)``, the same arithmetic; ``linear`` and ``communication`` are fitted to Vidur's
    A100 measurements (``ops.py``, ``comm.py``, ``fit.toml``; scripts/fit_hardware.py), attention
    and the host's overhead are modelled (``efficiency.toml``). docs/engine.md has the errors.
"""
