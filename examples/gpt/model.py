"""A nanoGPT-style byte-level GPT (decoder-only transformer) that torch.jit.script accepts.

Imported by prepare.py (which scripts and saves it) and train_reference.py. As in nanoGPT:
token + learned position embeddings, n_layer blocks of pre-LayerNorm causal self-attention
and a GELU MLP, a final LayerNorm and an (untied) lm_head; Linear/Embedding weights
N(0, 0.02), the residual projections N(0, 0.02 / sqrt(2 n_layer)).

Two exports:
  GPT            forward(idx, targets=None) -> (logits [B, T, V], loss or None), loss =
                 cross-entropy over every position (the job's LOSS_KIND_MODEL);
  GPTLogitsOnly  forward(idx) -> logits [B, T, V] (the trainer computes the loss).
Both keep `block_size` as an attribute, so generate.py can crop the context.

Attention uses an explicit causal mask and softmax: torch 1.13 has no
F.scaled_dot_product_attention. The mask is built in forward rather than kept as a
buffer, so the state_dict holds only trained parameters.
"""
import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass
class GPTConfig:
    vocab_size: int = 256  # bytes
    block_size: int = 64
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        if cfg.n_embd % cfg.n_head != 0:
            raise ValueError("n_embd must be a multiple of n_head")
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)  # q, k, v in one matmul
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.attn_dropout = nn.Dropout(cfg.dropout)
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # [B, nh, T, hs]
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~causal, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.block_size = cfg.block_size
        self.vocab_size = cfg.vocab_size
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.Sequential(*[Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self._init_weights(cfg.n_layer)

    def _init_weights(self, n_layer: int) -> None:
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):  # GPT-2: scale the residual branches' outputs
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))
            elif p.dim() == 2 and "ln_" not in name:  # Linear and Embedding weights
                nn.init.normal_(p, 0.0, 0.02)
            elif name.endswith("bias") and "ln_" not in name:
                nn.init.zeros_(p)
        # LayerNorms keep PyTorch's (weight 1, bias 0).

    def logits(self, idx: Tensor) -> Tensor:
        T = idx.size(1)
        if T > self.block_size:
            raise ValueError(f"sequence of {T} tokens, block_size is {self.block_size}")
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx.long()) + self.wpe(pos))
        return self.lm_head(self.ln_f(self.h(x)))

    def forward(self, idx: Tensor, targets: Optional[Tensor] = None) -> Tuple[Tensor, Optional[Tensor]]:
        logits = self.logits(idx)
        loss: Optional[Tensor] = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1).long())
        return logits, loss


class GPTLogitsOnly(GPT):
    """The same network whose forward returns logits only (the trainer computes the loss)."""

    def forward(self, idx: Tensor) -> Tensor:  # type: ignore[override]
        return self.logits(idx)


def build(cfg: GPTConfig, seed: int, logits_only: bool = False) -> GPT:
    """The network with a deterministic initialization: same seed and config, same weights."""
    torch.manual_seed(seed)
    return (GPTLogitsOnly if logits_only else GPT)(cfg)


def add_config_flags(p) -> None:
    """The GPTConfig flags shared by prepare.py and train_reference.py."""
    d = GPTConfig()
    p.add_argument("--n-layer", type=int, default=d.n_layer)
    p.add_argument("--n-head", type=int, default=d.n_head)
    p.add_argument("--n-embd", type=int, default=d.n_embd)
    p.add_argument("--block-size", type=int, default=d.block_size, help="context length in tokens")
    p.add_argument("--dropout", type=float, default=d.dropout)


def config_from_args(args) -> GPTConfig:
    return GPTConfig(block_size=args.block_size, n_layer=args.n_layer, n_head=args.n_head,
                     n_embd=args.n_embd, dropout=args.dropout)
