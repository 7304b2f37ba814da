"""The Rego quantity parser (policies/lib/quantity.rego) agrees with podfit.quantity, the exact
Python reference, on generated quantities, in both engines (the compiled module in-process and opa)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from conftest import tool
from podfit.quantity import QuantityError, parse_cpu, parse_memory

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "policies" / "lib" / "quantity.rego"
QUERY = (
    "x := [{i: c | some i, v in input.v; c := data.podfit.lib.quantity.cpu_millicores(v)},"
    " {i: m | some i, v in input.v; m := data.podfit.lib.quantity.memory_bytes(v)}]"
)


def values() -> list:
    fixed = [
        "1",
        "1.5",
        "1500m",
        "0.1",
        ".5",
        "1.",
        "1e3",
        "1E-3",
        "2Gi",
        "0.5Gi",
        "2G",
        "1n",
        "1u",
        "-1",
        "-0",
        "+1",
        "1.5cores",
        "",
        " 2 ",
        "1e41",
        "1e40",
        "9223372036854775807",
        "9223372036854775808",
        "8Ei",
        "7Ei",
        "1.0000000001",
        "0.0000000001",
        "123456789.123456789Mi",
        "3Ti",
        "00012",
        "1e-40",
        "abc",
        1.5,
        2,
        0.1,
        1e-05,
        250000000,
        True,
        None,
        "5e-7",
        "1.23456789e+07",
        12345678.9,
        "1" * 40,
        # the fast path's edges (15 digits, the 10^18 guard, rounding up when digits are cut off)
        "999999999999999",
        "999999999999999Ti",
        "99999Ti",
        "999999Ti",
        "123456789012345k",
        "12345678901234.5",
        "0.004k",
        "250000u",
        "250001u",
        "100000000n",
        "1.000000000000001",
        "0.0001",
        "999999999999999m",
        "9223372036854775Ki",
        "9007199254740993",
        "00",
        "0.",
        "0.000",
        "1.5Gi",
        "0.0625Gi",
        "5120Mi",
    ]
    rng = random.Random(7)
    for _ in range(300):
        num = rng.choice(["", "0", "1", "12", "999", "1024", "7", "000123"]) + rng.choice(
            ["", ".", ".5", ".123", ".0001", ".999999999"]
        )
        num = num if num not in ("", ".") else "3"
        suffix = rng.choice(
            ["", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "Pi", "n", "u", "e3", "e-2", "E+1", "Ei", "P", "E"]
        )
        fixed.append(num + suffix)
    return fixed


def expected(vals: list) -> list:
    def py(f, v):
        try:
            return f(v)
        except QuantityError:
            return None

    return [[py(parse_cpu, v), py(parse_memory, v)] for v in vals]


def pick(result: list, n: int) -> list:
    cpu, mem = result
    return [[cpu.get(str(i), cpu.get(i)), mem.get(str(i), mem.get(i))] for i in range(n)]


def test_embedded_engine_parses_like_python():
    """The compiled module's quantity entrypoint (the memo the embedded engine evaluates first, with
    the library's own parser): every string it parses below 2^53, as Python parses it, and no other."""
    from podfit.engines import wasm
    from podfit.engines.base import normalise

    texts = sorted({v for v in normalise(values()) if isinstance(v, str)})
    inst = wasm.Instance()
    inst.set_data({})
    cpu, memory = inst.evaluate(f"{wasm.ENTRY_PACKAGE}/quantities", wasm._json(texts))
    want = dict(zip(texts, expected(texts), strict=True))
    assert cpu == {t: c for t, (c, _) in want.items() if c is not None and c < 2**53}
    assert memory == {t: m for t, (_, m) in want.items() if m is not None and m < 2**53}
    assert len(cpu) > 200 and len(memory) > 200


@pytest.mark.tools
@pytest.mark.skipif(tool("opa") is None, reason="opa not built (make tools)")
def test_opa_parses_like_python():
    vals = values()
    proc = subprocess.run(
        [tool("opa"), "eval", "-f", "json", "--stdin-input", "-d", str(LIB), QUERY],
        input=json.dumps({"v": vals}),
        capture_output=True,
        text=True,
        check=True,
    )
    got = pick(json.loads(proc.stdout)["result"][0]["bindings"]["x"], len(vals))
    assert got == expected(vals)
