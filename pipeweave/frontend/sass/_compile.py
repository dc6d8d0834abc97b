"""Compile a Triton kernel for a target arch on a CPU-only machine and disassemble it.

triton is imported lazily here (never at package import). The argument specialisation mimics
Triton's JIT for a real launch: 16-byte aligned pointers get ``tt.divisibility=16``, integers equal
to 1 become constexprs, integers divisible by 16 get ``tt.divisibility=16``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._errors import CompileError
from ._arch import arch_capability, normalize_arch

__all__ = [
    "Ptr",
    "CompiledSass",
    "import_triton",
    "compile_kernel",
    "specialize",
    "kernel_file_path",
    "load_kernel_file",
    "parse_signature",
    "triton_version",
]

_INSTALL_HINT = "pip install 'pipeweave[sass]'  (or: pip install triton)"


def import_triton():
    """Import triton or raise CompileError saying how to install it."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # keep FFMA contraction, silence the 3.9 warning
    try:
        import triton  # noqa: F401
        from triton.backends.compiler import GPUTarget  # noqa: F401
        from triton.compiler import ASTSource  # noqa: F401
    except ImportError as exc:
        raise CompileError(
            f"the SASS front-end needs Triton, which is not importable ({exc})", hint=_INSTALL_HINT
        ) from None
    return triton


def triton_version() -> str | None:
    """Installed triton version without importing it (None when missing)."""
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:
        return None


@dataclass(frozen=True)
class Ptr:
    """A pointer argument of the given Triton element type (``bf16``, ``fp16``, ``fp32``, ``fp8e4nv``, ``i32`` ...)."""

    dtype: str
    aligned: bool = True  # 16-byte aligned base (torch allocations are)


@dataclass
class CompiledSass:
    """What one compile produced: the disassembly and the metadata the SASS parser needs."""

    name: str
    arch: str
    num_warps: int
    num_stages: int
    sass: str
    shared_bytes: int
    tmem_columns: int
    signature: dict[str, str]
    constexprs: dict[str, Any]
    divisible: list[str]
    compile_s: float
    disasm_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def specialization(self) -> str:
        """Compact text form of the argument specialisation (part of the cache key): runtime arguments
        *without* ``tt.divisibility=16`` (``nd:``) and integer arguments equal to 1 turned into constexprs (``one:``).
        """
        runtime = [k for k, t in self.signature.items() if t != "constexpr"]
        nd = sorted(k for k in runtime if k not in self.divisible)
        ones = sorted(k for k in self.extra.get("ones", []))
        return "nd:" + (",".join(nd) or "-") + ";one:" + (",".join(ones) or "-")


def specialize(fn: Any, args: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any], dict, list[str]]:
    """Turn launch-time argument values into (signature, constexprs, attrs, divisible-arg-names) like the JIT.

    ``args`` maps every parameter of ``fn`` to: a :class:`Ptr`; an ``int``/``float``/``bool`` runtime value;
    a type string (``"i32"``, ``"fp32"`` ...: unspecialised); or, for ``tl.constexpr`` parameters, the value.
    """
    names = list(fn.arg_names)
    missing = [n for n in names if n not in args]
    extra = [n for n in args if n not in names]
    if missing or extra:
        raise CompileError(
            f"kernel {fn.__name__!r} arguments do not match: missing {missing}, unknown {extra}",
            hint=f"the kernel takes: {', '.join(names)}",
        )
    sig: dict[str, str] = {}
    const: dict[str, Any] = {}
    attrs: dict[tuple[int, ...], list] = {}
    divisible: list[str] = []
    for i, (name, param) in enumerate(zip(names, fn.params)):
        v = args[name]
        if param.is_constexpr:
            sig[name] = "constexpr"
            const[name] = v
        elif isinstance(v, Ptr):
            sig[name] = "*" + v.dtype
            if v.aligned:
                attrs[(i,)] = [["tt.divisibility", 16]]
                divisible.append(name)
        elif isinstance(v, bool):
            sig[name] = "u1"
        elif isinstance(v, int):
            if v == 1:
                sig[name] = "constexpr"
                const[name] = 1
            else:
                sig[name] = "i32" if -(2**31) <= v < 2**31 else "i64"
                if v % 16 == 0:
                    attrs[(i,)] = [["tt.divisibility", 16]]
                    divisible.append(name)
        elif isinstance(v, float):
            sig[name] = "fp32"
        elif isinstance(v, str):
            sig[name] = v
        elif v is None:
            sig[name] = "constexpr"
            const[name] = None
        else:
            raise CompileError(
                f"argument {name}={v!r} of kernel {fn.__name__!r} has an unsupported type {type(v).__name__}",
                hint="pass pipeweave.frontend.sass.Ptr('fp32') (or another element type) for a pointer, an int, "
                "float or bool for a scalar, a type name such as 'i32' for an unspecialised scalar, or None",
            )
    return sig, const, attrs, divisible


def compile_kernel(
    fn: Any,
    args: dict[str, Any],
    arch: str,
    *,
    num_warps: int = 4,
    num_stages: int = 3,
    options: dict[str, Any] | None = None,
) -> CompiledSass:
    """Compile the ``@triton.jit`` function ``fn`` for ``arch`` with the JIT's specialisation of ``args``.

    Returns the SASS text (``cuobjdump -res-usage -sass``) and the metadata. Raises :class:`CompileError`
    for a missing triton install, an unsupported arch, or a kernel that does not compile.
    """
    arch = normalize_arch(arch)
    triton = import_triton()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig, const, attrs, divisible = specialize(fn, args)
    opts = {"num_warps": int(num_warps), "num_stages": int(num_stages), **(options or {})}
    t0 = time.perf_counter()
    try:
        k = triton.compile(
            ASTSource(fn, sig, const, attrs), target=GPUTarget("cuda", arch_capability(arch), 32), options=opts
        )
        cubin = k.asm["cubin"]
    except CompileError:
        raise
    except Exception as exc:  # triton raises CompilationError, PTXASError, RuntimeError, AssertionError ...
        msg = str(exc).strip()
        lines = [ln for ln in msg.splitlines() if ln.strip()]
        short = "\n".join(lines[:12] + (["..."] if len(lines) > 12 else []))
        raise CompileError(
            f"Triton could not compile {getattr(fn, '__name__', fn)!r} for {arch} "
            f"(num_warps={num_warps}, num_stages={num_stages}): {type(exc).__name__}: {short}",
            hint="fix the kernel source or the config (block sizes must be powers of 2; "
            "shared memory must fit the arch)",
        ) from None
    compile_s = time.perf_counter() - t0
    md = k.metadata
    sass, disasm_s = _disassemble(cubin, triton)
    return CompiledSass(
        name=md.name,
        arch=arch,
        num_warps=int(num_warps),
        num_stages=int(num_stages),
        sass=sass,
        shared_bytes=int(getattr(md, "shared", 0) or 0),
        tmem_columns=int(getattr(md, "tmem_size", 0) or 0),
        signature=sig,
        constexprs={k2: v for k2, v in const.items()},
        divisible=divisible,
        compile_s=compile_s,
        disasm_s=disasm_s,
        extra={"ones": [n for n, v in args.items() if type(v) is int and v == 1 and not _is_constexpr_param(fn, n)]},
    )


def _is_constexpr_param(fn: Any, name: str) -> bool:
    return any(p.name == name and p.is_constexpr for p in fn.params)


def _disassemble(cubin: bytes, triton: Any) -> tuple[str, float]:
    import tempfile

    try:
        tool = triton.knobs.nvidia.cuobjdump.path
    except Exception as exc:
        raise CompileError(f"cuobjdump not found in the triton install ({exc})", hint=_INSTALL_HINT) from None
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pipeweave-sass-") as d:
        path = Path(d) / "kernel.cubin"
        path.write_bytes(cubin)
        try:
            out = subprocess.run(
                [tool, "-res-usage", "-sass", str(path)], capture_output=True, text=True, check=True, timeout=300
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise CompileError(
                f"cuobjdump failed on the compiled cubin: {exc}",
                hint="set TRITON_CUOBJDUMP_PATH to a working cuobjdump",
            ) from None
    return out.stdout, time.perf_counter() - t0


def kernel_file_path(spec: str) -> tuple[Path, str]:
    """``(file, kernel name)`` of ``path/to/file.py:kernel_name``, after checking that the form is right and the
    file exists (no triton needed: checked before anything else about the kernel)."""
    path_s, sep, name = str(spec).rpartition(":")
    if not sep or not path_s or not name:
        raise CompileError(f"kernel {spec!r} is not PATH.py:KERNEL_NAME", hint="e.g. 'my_kernels.py:matmul'")
    path = Path(path_s)
    if not path.is_file():
        raise CompileError(
            f"kernel file {str(path)!r} does not exist (looked in {str(Path.cwd())!r})",
            hint="check the path: give 'path/to/file.py:kernel_name', relative to the current directory or absolute",
        )
    return path, name


def load_kernel_file(spec: str) -> Any:
    """``path/to/file.py:kernel_name`` -> the ``@triton.jit`` function (imports triton)."""
    import_triton()
    path, name = kernel_file_path(spec)
    mod_name = f"_pipeweave_user_kernel_{abs(hash(str(path.resolve())))}"
    sp = importlib.util.spec_from_file_location(mod_name, path)
    if sp is None or sp.loader is None:
        raise CompileError(
            f"cannot import {str(path)!r} as a Python module",
            hint="give a Python source file ending in .py, e.g. 'my_kernels.py:matmul'",
        )
    mod = importlib.util.module_from_spec(sp)
    sys.modules[mod_name] = mod  # triton's JIT inspects the module of the function
    try:
        sp.loader.exec_module(mod)
    except (Exception, SystemExit) as exc:  # a file that calls sys.exit() at import must not end pipeweave
        sys.modules.pop(mod_name, None)
        raise CompileError(
            f"importing {str(path)!r} failed: {type(exc).__name__}: {exc}",
            hint="the file must be importable Python defining a @triton.jit kernel",
        ) from None
    fn = getattr(mod, name, None)
    if fn is None:
        kernels = sorted(k for k, v in vars(mod).items() if hasattr(v, "arg_names") and hasattr(v, "params"))
        raise CompileError(
            f"{str(path)!r} defines no {name!r}",
            hint=(
                f"the @triton.jit kernels it defines: {', '.join(kernels)} (e.g. '{path}:{kernels[0]}')"
                if kernels
                else "it defines no @triton.jit kernel"
            ),
        )
    if not hasattr(fn, "arg_names") or not hasattr(fn, "params"):
        raise CompileError(
            f"{name!r} in {str(path)!r} is not a @triton.jit function (it is a {type(fn).__name__})",
            hint="decorate it with @triton.jit, or name the @triton.jit kernel that it launches",
        )
    return fn


def parse_signature(fn: Any, text: str) -> dict[str, Any]:
    """Parse ``--signature`` text ``name=value,...`` for ``fn`` into :func:`specialize` arguments.

    Values: ``*bf16`` / ``*fp16`` / ``*fp32`` / ``*fp8e4nv`` ... (aligned pointer), an integer (a runtime
    int specialised like the JIT, or the value of a ``tl.constexpr`` parameter), a float, ``true``/
    ``false``, or a bare type ``i32``/``i64``/``fp32`` (unspecialised runtime argument).
    """
    if not isinstance(text, str):
        raise CompileError(
            f"the signature must be text 'NAME=VALUE,...', got a {type(text).__name__}",
            hint="e.g. 'x_ptr=*fp32,n=1024,BLOCK=256' (or pass a dict of values as args=)",
        )
    out: dict[str, Any] = {}
    params = {p.name: p for p in fn.params}
    for item in split_signature_items(text):
        name, sep, val = item.partition("=")
        name, val = name.strip(), val.strip()
        if not sep or name not in params:
            raise CompileError(
                f"signature entry {item!r} is not NAME=VALUE for a parameter of {fn.__name__!r}",
                hint=f"parameters: {', '.join(params)}",
            )
        if name in out:
            raise CompileError(
                f"the signature gives {name!r} twice ({item!r} repeats it)",
                hint=f"give each parameter of {fn.__name__!r} once",
            )
        if val.startswith("*"):
            ptr = _POINTER.match(val)
            if ptr is None or ptr.group("dtype") not in POINTER_DTYPES:
                raise CompileError(
                    f"signature entry {item!r}: {val!r} is not a pointer type",
                    hint=f"write *DTYPE or *DTYPE[SHAPE] (e.g. x_ptr=*fp32[16777216], w_ptr=*bf16[4096x4096]); "
                    f"DTYPE one of {', '.join(POINTER_DTYPES)}",
                )
            out[name] = Ptr(ptr.group("dtype"))
        elif val.lower() in ("true", "false"):
            out[name] = val.lower() == "true"
        elif val in ("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64"):
            out[name] = val
        else:
            try:
                out[name] = int(val, 0)
            except ValueError:
                try:
                    out[name] = float(val)
                except ValueError:
                    raise CompileError(
                        f"cannot read the value of signature entry {item!r}",
                        hint="give an integer (1024, 0x400), a float, true/false, a pointer such as *fp32, or a "
                        "scalar type such as i32",
                    ) from None
    return out


#: element types a pointer argument may have in a signature (``*bf16``)
POINTER_DTYPES: tuple[str, ...] = (
    "fp8e4nv",
    "fp8e5",
    "fp8e4b15",
    "fp8e4b8",
    "fp8e5b16",
    "u1",
    "u16",
    "i1",
    "i8",
    "u8",
    "i16",
    "fp16",
    "bf16",
    "i32",
    "u32",
    "fp32",
    "i64",
    "u64",
    "fp64",
)
_POINTER = re.compile(r"^\*(?P<dtype>[A-Za-z0-9_]+)(?:\[\s*[0-9]+(?:\s*[x*, ]\s*[0-9]+)*\s*\])?$")


def split_signature_items(text: str) -> list[str]:
    """``a=1,b=*fp32[4,8],c=2`` -> its entries (commas inside ``[...]`` separate dimensions, not entries)."""
    items: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return [i.strip() for i in items if i.strip()]
