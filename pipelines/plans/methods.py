"""The training methods of `model.method` and their FLOPs per token: a module of constants, cheap
enough for the command line to offer them before it loads anything else."""

TRAINING_FLOPS_PER_PARAMETER: dict[str, int] = {"pretrain": 6, "sft": 6, "dpo": 8, "lora": 4, "qlora": 4, "ppo": 20}
"""Training FLOPs per parameter and token processed, by `model.method` (the first the default):
forward 2 and backward 4 for pre-training and supervised fine-tuning; DPO adds the frozen
reference model's forward pass (2); LoRA's frozen base computes no weight gradients, half of the
backward pass, and QLoRA's 4-bit base is dequantized for the same matrix products; PPO (RLHF), per
token generated, runs the policy's generation (2), the reference, reward and value models'
forward passes (2 each), and trains the policy and the value model (6 each), all four taken at
the policy's size (docs/semantics.md#model-shapes)."""
