"""scf: structured control flow (counted loops, conditionals, while loops, select)."""

from typing import Any

from loom.dialects._shapes import RESULTS, RESULTS_FORMAT
from loom.dsl import (
    ADDRESS,
    ANY,
    I1_T,
    INDEX_T,
    ArgSource,
    Attr,
    AttrDef,
    AttrDict,
    AttrKind,
    AttrTable,
    BindingList,
    BlockArgs,
    Clause,
    ControlFlow,
    EnumDef,
    Example,
    HasParent,
    Kw,
    Operand,
    OptionalGroup,
    Pure,
    Ref,
    Refs,
    RegionArg,
    RegionDef,
    RegionRef,
    RegionTable,
    Result,
    ResultTypeList,
    SameType,
    SameTypeAt,
    Terminator,
    TypeOf,
    TypesOf,
    Violation,
    op,
)


def _region(name: str, **kw: Any) -> RegionDef:
    """A structured-control region: it ends in scf.yield, elided in text when it yields nothing."""
    return RegionDef(name, terminator="scf.yield", implicit_terminator=True, **kw)


_CASE_KEYS = AttrDef("case_keys", AttrKind.I64_ARRAY, doc="strictly increasing case keys")


def _verify_for(op, ctx) -> list[Violation]:  # noqa: ANN001
    attrs = op.attributes
    if "unroll_policy" in attrs and op.operands[3:4] and _has_unroll_factor(op, ctx):
        return [
            Violation(
                "STRUCTURE/014",
                "'unroll' is given 2 ways: use either bare unroll or unroll factor, not both",
                "unroll_policy",
            )
        ]
    if (
        "unroll_schedule" in attrs
        and "unroll_policy" not in attrs
        and not _has_unroll_factor(op, ctx)
    ):
        return [
            Violation(
                "STRUCTURE/014",
                "'schedule' must be paired with bare unroll or unroll factor",
                "unroll_schedule",
            )
        ]
    return _verify_residency(op, ctx)


def _has_unroll_factor(op, ctx) -> bool:  # noqa: ANN001
    return bool(ctx.operand_values(op, "unroll_factor"))


def _verify_residency(op, ctx) -> list[Violation]:  # noqa: ANN001
    if "residency_policy" in op.attributes and ctx.operand_values(op, "residency_minimum"):
        return [
            Violation(
                "STRUCTURE/014",
                "'residency' is given 2 ways: use either preserve or an SSA minimum, not both",
                "residency_policy",
            )
        ]
    return []


FOR = op(
    "scf.for",
    "Counted loop from lower_bound (inclusive) to upper_bound (exclusive) by a positive step.",
    operands=[
        Operand("lower_bound", ADDRESS),
        Operand("upper_bound", ADDRESS),
        Operand("step", ADDRESS),
        Operand("iter_args", ANY, variadic=True),
        Operand("unroll_factor", INDEX_T, optional=True),
        Operand(
            "residency_minimum",
            INDEX_T,
            optional=True,
            doc="register-residency floor for the compiler (a policy; no effect on results)",
        ),
    ],
    results=[RESULTS],
    attrs=[
        AttrDef("unroll_policy", AttrKind.UNIT, optional=True),
        AttrDef(
            "unroll_schedule",
            AttrKind.ENUM,
            optional=True,
            enum=EnumDef("schedule", ("linear", "interleaved", "recurrence")),
        ),
        AttrDef(
            "residency_policy",
            AttrKind.ENUM,
            optional=True,
            enum=EnumDef("residency", ("preserve",)),
            doc="keep the loop's register residency (a policy; no effect on results)",
        ),
    ],
    regions=[
        _region(
            "body",
            arg_source=ArgSource.DERIVED,
            derived_from=("~lower_bound", "iter_args"),
            yields="results",
        )
    ],
    traits=[
        SameType(("lower_bound", "upper_bound", "step")),
        SameTypeAt("iter_args", "results"),
        ControlFlow("loop_upper_bound", ("lower_bound", "upper_bound", "step")),
    ],
    format=[
        RegionArg("body", 0),
        Kw("="),
        Kw("["),
        Ref("lower_bound"),
        Kw("to"),
        Ref("upper_bound"),
        Kw("step"),
        Ref("step"),
        Kw("]"),
        BindingList("iter_args", "body", skip=1),
        RESULTS_FORMAT,
        OptionalGroup("unroll_factor", Clause("unroll", Ref("unroll_factor"))),
        OptionalGroup("unroll_policy", Kw("unroll")),
        OptionalGroup("unroll_schedule", Clause("schedule", Attr("unroll_schedule"))),
        OptionalGroup("residency_minimum", Clause("residency", Ref("residency_minimum"))),
        OptionalGroup("residency_policy", Clause("residency", Attr("residency_policy"))),
        RegionRef("body"),
    ],
    examples=[
        Example("scf.for %iv = [%lo to %hi step %st] {\n}", "%lo: index, %hi: index, %st: index"),
        Example(
            "%sum = scf.for %iv = [%lo to %hi step %st](%acc = %init : f32) -> (f32) {\n"
            "  %next = scalar.addf %acc, %init : f32\n"
            "  scf.yield %next : f32\n"
            "}",
            "%lo: index, %hi: index, %st: index, %init: f32",
        ),
    ],
    verifier=_verify_for,
)


def _verify_if(op, ctx) -> list[Violation]:  # noqa: ANN001
    if op.results and ctx.region(op, "else_region") is None:
        n = len(op.results)
        return [
            Violation(
                "STRUCTURE/013",
                f"else_region count is 0; it must be present when scf.if has results "
                f"(expected 1 for {n} result{'' if n == 1 else 's'})",
                "else_region",
            )
        ]
    return []


IF = op(
    "scf.if",
    "Runs then_region when the condition holds, else_region otherwise; yields the results.",
    operands=[Operand("condition", I1_T)],
    results=[RESULTS],
    regions=[
        _region("then_region", yields="results"),
        _region(
            "else_region",
            optional=True,
            yields="results",
        ),
    ],
    traits=[ControlFlow("region_selector", ("condition",))],
    format=[
        Ref("condition"),
        RESULTS_FORMAT,
        RegionRef("then_region"),
        OptionalGroup("else_region", Kw("else"), RegionRef("else_region")),
    ],
    examples=[
        Example("scf.if %c {\n}", "%c: i1"),
        Example(
            "%r = scf.if %c -> (f32) {\n  scf.yield %a : f32\n} else {\n  scf.yield %b : f32\n}",
            "%c: i1, %a: f32, %b: f32",
        ),
    ],
    verifier=_verify_if,
)


def _case_key_violation(op) -> list[Violation]:  # noqa: ANN001
    keys = tuple(op.attributes.get("case_keys", ()))
    for prev, key in zip(keys, keys[1:]):
        if key <= prev:
            return [
                Violation(
                    "STRUCTURE/014",
                    f"'case_keys' value {key} follows {prev}: expected a strictly increasing "
                    "sorted unique case key (attr_name=case_keys, "
                    f"actual_value={key})",
                    "case_keys",
                )
            ]
    return []


def _verify_switch(op, ctx) -> list[Violation]:  # noqa: ANN001
    found = _case_key_violation(op)
    keys = tuple(op.attributes.get("case_keys", ()))
    cases = op.regions[1:]
    if len(cases) != len(keys):
        found.append(
            Violation(
                "STRUCTURE/013",
                f"case_regions count is {len(cases)}; it must equal the case key count "
                f"(expected {len(keys)})",
                "case_regions",
            )
        )
    regions = [("default_region", op.regions[0])] if op.regions else []
    regions += [(f"case_regions[{k}]", r) for k, r in enumerate(cases)]
    for where, region in regions:
        found += ctx.yield_violations(op, region, where, "results")
    return found


SWITCH = op(
    "scf.switch",
    "Runs the case region whose key equals the selector, else the default region; "
    "yields the results.",
    operands=[Operand("selector", INDEX_T)],
    results=[RESULTS],
    attrs=[_CASE_KEYS],
    regions=[
        _region("default_region", doc="runs when no case key equals the selector"),
        _region(
            "case_regions",
            variadic=True,
            doc="one region per case key, in key order",
        ),
    ],
    traits=[ControlFlow("region_selector", ("selector",))],
    format=[
        Ref("selector"),
        RESULTS_FORMAT,
        RegionTable("case_keys", "case_regions", "default_region"),
    ],
    builder="switch",
    examples=[
        Example(
            "scf.switch %s {\n  case 0 {\n  }\n  default {\n  }\n}",
            "%s: index",
        ),
        Example(
            "%r = scf.switch %s -> (f32) {\n"
            "  case 0 {\n"
            "    scf.yield %a : f32\n"
            "  }\n"
            "  case 2 {\n"
            "    scf.yield %b : f32\n"
            "  }\n"
            "  default {\n"
            "    scf.yield %c : f32\n"
            "  }\n"
            "}",
            "%s: index, %a: f32, %b: f32, %c: f32",
        ),
    ],
    verifier=_verify_switch,
)


def _verify_lookup(op, ctx) -> list[Violation]:  # noqa: ANN001
    n = len(op.results)
    if not n:
        return [
            Violation(
                "STRUCTURE/013",
                "results count is 0; expected at least one lookup result (expected 1)",
                "results",
            )
        ]
    found = _case_key_violation(op)
    keys = tuple(op.attributes.get("case_keys", ()))
    values = ctx.operand_values(op, "values")
    want = (len(keys) + 1) * n
    if len(values) != want:
        found.append(
            Violation(
                "STRUCTURE/013",
                f"table holds {len(values)} values; expected (case key count + default row) "
                f"* result count = {want}",
                "values",
            )
        )
        return found
    for k, v in enumerate(values):
        col = k % n
        if v.type != op.results[col].type:
            found.append(
                Violation(
                    "TYPE/001",
                    f"table[{col}] (row {k // n}) has type {v.type} but results[{col}] is "
                    f"{op.results[col].type}",
                    "values",
                )
            )
            break
    return found


LOOKUP = op(
    "scf.lookup",
    "Picks the row of values whose key equals the selector, else the default row "
    "(whole values, no region runs).",
    operands=[
        Operand("selector", INDEX_T),
        Operand("values", ANY, variadic=True, doc="the case rows in key order, then the default"),
    ],
    results=[RESULTS],
    attrs=[_CASE_KEYS],
    traits=[Pure()],
    format=[
        Ref("selector"),
        AttrTable("case_keys", "values"),
        Kw(":"),
        ResultTypeList("results", parens=False),
    ],
    builder="lookup",
    examples=[
        Example(
            "%r = scf.lookup %s {\n  0 = (%a),\n  3 = (%b)\n} default(%c) : i32",
            "%s: index, %a: i32, %b: i32, %c: i32",
        ),
        Example(
            "%x, %y = scf.lookup %s {\n  1 = (%a, %b)\n} default(%b, %a) : index, index",
            "%s: index, %a: index, %b: index",
        ),
    ],
    verifier=_verify_lookup,
)

YIELD = op(
    "scf.yield",
    "Ends an scf region, passing values to the parent op.",
    operands=[Operand("values", ANY, variadic=True)],
    traits=[
        Terminator(values="values"),
        HasParent(("scf.for", "scf.if", "scf.while", "scf.switch")),
    ],
    format=[Refs("values"), OptionalGroup("values", Kw(":"), TypesOf("values"))],
    examples=[
        Example(
            "%r = scf.if %c -> (i32) {\n  scf.yield %a : i32\n} else {\n  scf.yield %b : i32\n}",
            "%c: i1, %a: i32, %b: i32",
        )
    ],
)

SELECT = op(
    "scf.select",
    "Chooses true_value when the condition holds, else false_value (whole values).",
    operands=[Operand("condition", I1_T), Operand("true_value", ANY), Operand("false_value", ANY)],
    results=[Result("result", ANY)],
    traits=[Pure(), SameType(("true_value", "false_value", "result"))],
    format=[
        Ref("condition"),
        Kw(","),
        Ref("true_value"),
        Kw(","),
        Ref("false_value"),
        Kw(":"),
        TypeOf("result"),
    ],
    examples=[Example("%r = scf.select %c, %a, %b : i32", "%c: i1, %a: i32, %b: i32")],
)

WHILE = op(
    "scf.while",
    "Runs before; scf.condition decides whether after runs and what it receives.",
    operands=[Operand("iter_args", ANY, variadic=True)],
    results=[RESULTS],
    regions=[
        RegionDef(
            "before",
            terminator="scf.condition",
            arg_source=ArgSource.DERIVED,
            derived_from=("iter_args",),
            yields="after",
        ),
        RegionDef(
            "after",
            terminator="scf.yield",
            arg_source=ArgSource.DERIVED,
            derived_from=("results",),
            yields="iter_args",
        ),
    ],
    traits=[ControlFlow("loop_condition", terminator_operand="condition")],
    format=[
        BindingList("iter_args", "before"),
        RESULTS_FORMAT,
        RegionRef("before"),
        Kw("do"),
        BlockArgs("after", omit_empty=True),
        RegionRef("after"),
    ],
    examples=[
        Example(
            "%r = scf.while(%x = %init : index) -> (index) {\n"
            "  %go = index.cmp slt, %x, %n : index\n"
            "  scf.condition %go, %x : i1, index\n"
            "} do(%y: index) {\n"
            "  %next = index.add %y, %y : index\n"
            "  scf.yield %next : index\n"
            "}",
            "%init: index, %n: index",
        )
    ],
)

CONDITION = op(
    "scf.condition",
    "Ends scf.while's before region: continue when true, forwarding values to after.",
    operands=[Operand("condition", I1_T), Operand("forwarded", ANY, variadic=True)],
    traits=[Terminator(values="forwarded"), HasParent(("scf.while",))],
    format=[Refs("condition", "forwarded"), Kw(":"), TypesOf("condition", "forwarded")],
    examples=[Example("scf.while {\n  scf.condition %c : i1\n} do {\n  scf.yield\n}", "%c: i1")],
)

FENCE = op(
    "scf.schedule.fence",
    "A scheduling boundary for the compiler: ops stay on their side of it; it emits nothing.",
    format=[],
    builder="fence",
    examples=[Example("scf.schedule.fence")],
)

RESIDENCY_REQUIRE = op(
    "scf.residency.require",
    "A function-level register-residency contract for the compiler (minimum -1: no floor).",
    attrs=[
        AttrDef("minimum", AttrKind.INT),
        AttrDef("preserve", AttrKind.BOOL, optional=True),
        AttrDef("projected_baseline", AttrKind.INT, optional=True),
    ],
    format=[Attr("minimum"), AttrDict()],
    builder="require",
    examples=[
        Example("scf.residency.require 2"),
        Example("scf.residency.require -1 {preserve = true, projected_baseline = 4}"),
    ],
)

RESIDENCY_CANDIDATE = op(
    "scf.residency.candidate",
    "Marks source as a residency candidate the compiler may recompute from captures; "
    "the result is source.",
    operands=[Operand("source", ANY), Operand("captures", ANY, variadic=True)],
    results=[Result("result", ANY)],
    attrs=[
        AttrDef("candidate_id", AttrKind.INT),
        AttrDef("recompute_cost", AttrKind.INT),
        AttrDef("preserves_baseline", AttrKind.BOOL, optional=True),
    ],
    traits=[SameType(("source", "result"))],
    format=[
        Attr("candidate_id"),
        Attr("recompute_cost"),
        Refs("source", "captures"),
        Kw(":"),
        TypeOf("result"),
        OptionalGroup("captures", Kw(","), TypesOf("captures")),
        AttrDict(),
    ],
    builder="candidate",
    examples=[
        Example(
            "%p = scf.residency.candidate 7 2 %v, %a, %b : f32, f32, f32",
            "%v: f32, %a: f32, %b: f32",
        ),
        Example("%p = scf.residency.candidate 1 0 %v : f32 {preserves_baseline = true}", "%v: f32"),
    ],
)

OPS = (
    FOR,
    IF,
    YIELD,
    SELECT,
    WHILE,
    CONDITION,
    FENCE,
    RESIDENCY_REQUIRE,
    RESIDENCY_CANDIDATE,
    SWITCH,
    LOOKUP,
)
