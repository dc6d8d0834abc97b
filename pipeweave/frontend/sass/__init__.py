"""SASS front-end: compile Triton kernels for a target arch on a CPU-only machine, read the instruction mix.

Importing this package does not import triton; compiling does (``pip install 'pipeweave[sass]'``).
:func:`load_sass_features` only reads the shipped cache under ``features/sass/`` and works without triton.
"""

from __future__ import annotations

from ._arch import SUPPORTED_ARCHS, arch_for_gpu, normalize_arch, occupancy
from ._builtin import BUILTINS, SassConfig, default_shape, family_builtin, function_hash, kernel_source_hash
from ._cache import (
    CACHE_FILE,
    MANIFEST_FILE,
    SASS_FEATURE_COLUMNS,
    cached_mix_row,
    load_cache,
    load_sass_features,
)
from ._compile import (
    CompiledSass,
    Ptr,
    compile_kernel,
    import_triton,
    kernel_file_path,
    load_kernel_file,
    parse_signature,
    specialize,
    split_signature_items,
)
from ._launch import eval_launch_expr
from ._mix import InstructionMix, LoopInfo, analyze_sass, instruction_mix
from ._parse import parse_sass
from ._pipes import PIPES, classify_opcode, mma_flops_per_warp_instruction

__all__ = [
    "split_signature_items",
    "import_triton",
    "kernel_file_path",
    "load_kernel_file",
    "parse_signature",
    "SassConfig",
    "InstructionMix",
    "LoopInfo",
    "CompiledSass",
    "Ptr",
    "PIPES",
    "BUILTINS",
    "SUPPORTED_ARCHS",
    "SASS_FEATURE_COLUMNS",
    "CACHE_FILE",
    "MANIFEST_FILE",
    "compile_kernel",
    "specialize",
    "instruction_mix",
    "eval_launch_expr",
    "analyze_sass",
    "parse_sass",
    "classify_opcode",
    "mma_flops_per_warp_instruction",
    "load_sass_features",
    "load_cache",
    "cached_mix_row",
    "normalize_arch",
    "arch_for_gpu",
    "occupancy",
    "default_shape",
    "family_builtin",
    "kernel_source_hash",
    "function_hash",
]
