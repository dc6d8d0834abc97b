"""The one occupancy rule (frontend.ctas_per_sm) in its two allocation modes; hand-made limits
(an sm_80-like SM: 32 CTA slots, 64 warps, 65,536 registers, 164 KiB shared memory)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeweave.frontend import ctas_per_sm

SM80 = dict(max_ctas=32, max_warps=64, regs_per_sm=65536, smem_per_sm_bytes=164 * 1024, smem_per_cta_bytes=163 * 1024)


def test_exact_allocation_by_hand():
    # 255 regs/thread -> 8,160 per warp, allocated as 8,192 -> 8 warps fit -> one 8-warp CTA
    assert ctas_per_sm(8, 255, 0, **SM80) == 1
    # 128 regs x 4 warps = 16,384 per CTA -> 4 CTAs; 32 KiB + 1 KiB reserved -> 4 CTAs (164/33)
    assert ctas_per_sm(4, 128, 32 * 1024, **SM80) == 4
    # 40 KiB + 1 KiB reserved = 41 KiB -> 164 // 41 = 4; without the reservation it would be 4.1 -> 4 too
    # 40.5 KiB: 41.5 KiB with the reservation -> 3 CTAs
    assert ctas_per_sm(1, 0, 40.5 * 1024, **SM80) == 3
    # warp slots: 16-warp CTAs -> 4
    assert ctas_per_sm(16, 0, 0, **SM80) == 4
    # CTA slots bind for tiny CTAs
    assert ctas_per_sm(1, 0, 0, **SM80) == 32
    # TMEM: 512 columns per SM, 256 per CTA -> 2
    assert ctas_per_sm(4, 0, 0, **SM80, tmem_columns=256, tmem_columns_per_sm=512) == 2


def test_a_cta_over_the_per_cta_limit_does_not_fit_exactly_but_runs_estimated():
    big = 170 * 1024
    assert ctas_per_sm(4, 0, big, **SM80) == 0
    assert ctas_per_sm(4, 0, big, **SM80, allocation="estimated") == 1


def test_modes_agree_when_counts_are_already_allocation_aligned():
    # registers a multiple of 8 per thread (256 per warp) and shared memory already holding the
    # reservation in 128-byte units: the granularity changes nothing
    rng = np.random.default_rng(0)
    warps = rng.choice([1, 2, 4, 8, 16], 500)
    regs = rng.choice([8, 32, 64, 96, 128, 168, 256], 500)
    smem = rng.integers(1, 1200, 500) * 128
    exact = ctas_per_sm(warps, regs, smem, **SM80)
    est = ctas_per_sm(warps, regs, smem + 1024, **SM80, allocation="estimated")
    fits = exact > 0
    np.testing.assert_array_equal(exact[fits], est[fits])


def test_the_sass_front_end_uses_the_exact_mode():
    from pipeweave.frontend.sass import occupancy
    from pipeweave.frontend.sass._arch import arch_limits

    lim = arch_limits("sm_90a")
    for warps, regs, smem in [(4, 168, 98304), (8, 255, 0), (4, 64, 232448), (2, 40, 5000)]:
        want = ctas_per_sm(
            warps,
            regs,
            smem,
            max_ctas=lim.max_ctas,
            max_warps=lim.max_warps,
            regs_per_sm=lim.regs,
            smem_per_sm_bytes=lim.smem_per_sm_bytes,
            smem_per_cta_bytes=lim.smem_per_cta_bytes,
        )
        assert occupancy("sm_90", num_warps=warps, registers=regs, shared_bytes=smem) == int(want)


def test_bad_allocation_mode_is_named():
    with pytest.raises(ValueError, match="'roughly'"):
        ctas_per_sm(4, 0, 0, **SM80, allocation="roughly")  # type: ignore[arg-type]
