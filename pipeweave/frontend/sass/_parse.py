"""Parse ``cuobjdump -res-usage -sass`` output: instructions, resource usage, loops (back-edges)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..._errors import CompileError

__all__ = ["Instruction", "Loop", "SassFunction", "parse_sass", "find_loops"]

_LINE = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*([^;]*);")
_HEX = re.compile(r"0x([0-9a-fA-F]+)")
_RES = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
_FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
_UMOV_IMM = re.compile(r"^(UR\d+),\s*0x([0-9a-fA-F]+)$")
_IDESC = re.compile(r"idesc\[(UR\d+)\]")


@dataclass
class Instruction:
    addr: int
    predicate: str
    opcode: str
    operands: str
    idesc: int | None = None  # tcgen05 MMA instruction descriptor, when it could be traced

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]

    def branch_target(self) -> int | None:
        if self.base not in ("BRA", "JMP"):
            return None
        m = _HEX.findall(self.operands)
        return int(m[-1], 16) if m else None


@dataclass
class Loop:
    start: int  # address of the loop head (branch target)
    end: int  # address of the back-edge branch
    body: list[int] = field(default_factory=list)  # instruction indices
    children: list[Loop] = field(default_factory=list)

    def contains(self, other: Loop) -> bool:
        return self.start <= other.start and other.end <= self.end and self is not other


@dataclass
class SassFunction:
    name: str
    instructions: list[Instruction]
    registers: int = 0
    stack_bytes: int = 0
    static_shared_bytes: int = 0
    local_bytes: int = 0
    cold_instructions: int = 0  # out-of-line spin-wait / trap code after the last EXIT (dropped)


def parse_sass(text: str, function: str | None = None) -> SassFunction:
    """Parse cuobjdump text of one kernel; everything after the last unpredicated EXIT is dropped."""
    funcs: dict[str, list[Instruction]] = {}
    res: dict[str, tuple[int, int, int, int]] = {}
    cur: str | None = None
    res_func: str | None = None
    for line in text.splitlines():
        m_res_head = re.match(r"^\s*Function\s+(\S+?):\s*$", line)
        if m_res_head:
            res_func = m_res_head.group(1)
            continue
        m = _RES.search(line)
        if m and res_func is not None:
            res[res_func] = tuple(int(g) for g in m.groups())  # type: ignore[assignment]
            res_func = None
            continue
        m = _FUNC.match(line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        if cur is None:
            continue
        m = _LINE.match(line)
        if m:
            addr = int(m.group(1), 16)
            pred = (m.group(2) or "").strip()
            funcs[cur].append(Instruction(addr, pred, m.group(3), m.group(4).strip()))
    if not funcs:
        raise CompileError("the disassembly holds no SASS function", hint="check the cubin with cuobjdump -sass")
    name = function if function in funcs else next(iter(funcs))
    instrs = funcs[name]
    last_exit = max(
        (i for i, ins in enumerate(instrs) if ins.base == "EXIT" and not ins.predicate), default=len(instrs) - 1
    )
    kept, cold = instrs[: last_exit + 1], instrs[last_exit + 1 :]
    n_cold = sum(1 for ins in cold if ins.base != "NOP" and not (ins.base == "BRA" and ins.branch_target() == ins.addr))
    _attach_idesc(kept)
    reg, stack, shared, local = res.get(name, (0, 0, 0, 0))
    return SassFunction(name, kept, reg, stack, shared, local, n_cold)


def _attach_idesc(instrs: list[Instruction]) -> None:
    """For tcgen05 MMAs, find the latest ``UMOV URx, imm`` defining the idesc register before them."""
    last_imm: dict[str, int] = {}
    for ins in instrs:
        if ins.base == "UMOV":
            m = _UMOV_IMM.match(ins.operands.replace(" ", ""))
            if m:
                last_imm[m.group(1)] = int(m.group(2), 16)
            else:
                dst = ins.operands.split(",", 1)[0].strip()
                last_imm.pop(dst, None)
        elif ins.base.startswith("UTC") and "MMA" in ins.base:
            m = _IDESC.search(ins.operands)
            if m and m.group(1) in last_imm:
                ins.idesc = last_imm[m.group(1)]


def find_loops(instrs: list[Instruction], *, min_body: int = 16) -> list[Loop]:
    """Work loops as a forest of outermost-first loops, found from backward branches.

    Back-edges whose body is shorter than ``min_body`` instructions, or holds NANOSLEEP (TMEM
    allocation retry) or an EXIT, are spin/retry loops and are ignored. Back-edges to the same head
    merge into one loop (the farthest one closes it).
    """
    addr_index = {ins.addr: i for i, ins in enumerate(instrs)}
    heads: dict[int, int] = {}
    for i, ins in enumerate(instrs):
        tgt = ins.branch_target()
        if tgt is None or tgt >= ins.addr or tgt not in addr_index:
            continue
        lo = addr_index[tgt]
        body = instrs[lo : i + 1]
        if len(body) < min_body:
            continue
        if any(b.base == "NANOSLEEP" or (b.base == "EXIT" and not b.predicate) for b in body):
            continue
        heads[tgt] = max(heads.get(tgt, ins.addr), ins.addr)
    loops = sorted((Loop(s, e) for s, e in heads.items()), key=lambda lp: (lp.start, -lp.end))
    # build the nesting forest; partially overlapping loops are merged into the enclosing span
    roots: list[Loop] = []
    stack: list[Loop] = []
    for lp in loops:
        while stack and not (stack[-1].start <= lp.start and lp.end <= stack[-1].end):
            stack.pop()
        if stack:
            stack[-1].children.append(lp)
        else:
            if roots and lp.start <= roots[-1].end:  # overlaps the previous root: extend it
                roots[-1].end = max(roots[-1].end, lp.end)
                stack = [roots[-1]]
                continue
            roots.append(lp)
        stack.append(lp)
    for lp in _walk(roots):
        lp.body = [addr_index[ins.addr] for ins in instrs if lp.start <= ins.addr <= lp.end]
    return roots


def _walk(loops: list[Loop]):
    for lp in loops:
        yield lp
        yield from _walk(lp.children)
