"""Importer helpers: build the shell of a kernel module that a frontend then fills.

``create_kernel_module(KernelModuleSpec(...))`` makes the target record, the kernel with its
config region (six index constants and ``kernel.launch.config``) and an empty body whose
arguments are ready to use.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from loom.builder import LoomBuilder, module_builder
from loom.dsl import OpDef
from loom.format.text.printer import print_module
from loom.ir import BUFFER_TYPE, INDEX, Block, Module, Operation, Region, Type, Value
from loom.registry import OpRegistry, default_ops

_KNOWN_PRESETS = ("reference",)


@dataclass(frozen=True)
class KernelArgumentSpec:
    """A launch (device) argument of the kernel."""

    ordinal: int
    name: str
    type: Type = BUFFER_TYPE


@dataclass(frozen=True)
class KernelConfigArgumentSpec:
    """A workload argument of the kernel's config region."""

    ordinal: int
    name: str
    type: Type = INDEX


def normalize_launch_tuple(
    values: Sequence[int], what: str = "launch tuple"
) -> tuple[int, int, int]:
    """Pad to three entries with 1; more than three is a ValueError."""
    values = tuple(values)
    if len(values) > 3:
        raise ValueError(f"{what} has {len(values)} entries; at most 3 (x, y, z)")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{what} entries must be positive ints, got {v!r}")
    return (*values, *(1,) * (3 - len(values)))  # type: ignore[return-value]


def normalize_workgroup_size(values: Sequence[int]) -> tuple[int, int, int]:
    """``normalize_launch_tuple`` for workgroup sizes."""
    return normalize_launch_tuple(values, "workgroup_size")


@dataclass(frozen=True)
class KernelLaunchConfigSpec:
    """A static grid: counts in workgroups and the workgroup size (padded to 3 with 1)."""

    workgroup_count: tuple[int, ...] = (1, 1, 1)
    workgroup_size: tuple[int, ...] = (1, 1, 1)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "workgroup_count", normalize_launch_tuple(self.workgroup_count, "workgroup_count")
        )
        object.__setattr__(self, "workgroup_size", normalize_workgroup_size(self.workgroup_size))


@dataclass(frozen=True)
class KernelModuleSpec:
    """What ``create_kernel_module`` builds."""

    target_preset: str
    export_symbol: str
    callee: str
    arguments: Sequence[KernelArgumentSpec]
    config_arguments: Sequence[KernelConfigArgumentSpec] = ()
    target_symbol: str | None = None
    launch_config: KernelLaunchConfigSpec | None = field(default_factory=KernelLaunchConfigSpec)


@dataclass
class KernelModuleShell:
    """The built module, its builder and handles on the kernel's regions and arguments."""

    module: Module
    builder: LoomBuilder
    config: Region
    body: Region
    config_arguments_by_ordinal: dict[int, Value]
    body_arguments_by_ordinal: dict[int, Value]
    target_symbol: str
    kernel_symbol: str
    kernel: Operation | None = None

    @property
    def body_block(self) -> Block:
        """The kernel body's entry block (empty: the frontend fills it)."""
        return self.body.blocks[0]

    @property
    def config_block(self) -> Block:
        """The config region's entry block."""
        return self.config.blocks[0]


def sanitize_symbol(text: str, fallback: str = "symbol") -> str:
    """Keep ``[A-Za-z0-9_]``, turn other runs into ``_``, strip ``_``; fallback if empty."""
    out = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")
    if not out:
        return fallback
    if out[0].isdigit():
        return f"{fallback}_{out}"
    return out


def sanitize_identifier(text: str, fallback: str = "value") -> str:
    """Like :func:`sanitize_symbol` for SSA names: strips ``%``, prefixes ``_`` before a digit."""
    out = re.sub(r"[^A-Za-z0-9_]+", "_", text.lstrip("%")).strip("_")
    if not out:
        return fallback
    if out[0].isdigit():
        return "_" + out
    return out


class NameAllocator:
    """Hands out unique names: the requested one, else ``name_2``, ``name_3``..."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._used: set[str] = set(reserved)

    def reserve_or_fresh(self, name: str) -> str:
        """``name`` if unused, else the first free ``name_N`` (N >= 2)."""
        candidate, n = name, 2
        while candidate in self._used:
            candidate = f"{name}_{n}"
            n += 1
        self._used.add(candidate)
        return candidate


def target_preset_amdgpu_kind(target_preset: str) -> str | None:
    """The AMDGPU processor named by ``-mcpu=...`` in the preset, if any (not supported yet)."""
    try:
        words = shlex.split(target_preset)
    except ValueError:
        return None
    for i, w in enumerate(words):
        for prefix in ("-mcpu=", "--mcpu="):
            if w.startswith(prefix):
                return w[len(prefix) :]
        if w in ("-mcpu", "--mcpu") and i + 1 < len(words):
            return words[i + 1]
    return None


def kernel_module_ops(target_preset: str) -> tuple[OpDef, ...]:
    """The declaration set for modules of this target preset (``"reference"``: every op)."""
    if target_preset not in _KNOWN_PRESETS:
        raise ValueError(
            f"unknown target preset {target_preset!r}; known presets: "
            + ", ".join(repr(p) for p in _KNOWN_PRESETS)
        )
    return default_ops()


def build_static_launch_config(
    builder: LoomBuilder, config_region: Region, launch_config: KernelLaunchConfigSpec
) -> None:
    """Fill a config region with six index constants and ``kernel.launch.config``."""
    from loom.ir import INDEX as _INDEX

    with builder.insertion_block(config_region.blocks[0]):
        values = {}
        for prefix, dims in (
            ("wg_count", launch_config.workgroup_count),
            ("wg_size", launch_config.workgroup_size),
        ):
            for axis, n in zip("xyz", dims):
                values[f"{prefix}_{axis}"] = builder.index.constant(
                    value=n, results=[_INDEX], name=f"{prefix}_{axis}"
                )
        builder.kernel.config(
            workgroup_count_x=values["wg_count_x"],
            workgroup_count_y=values["wg_count_y"],
            workgroup_count_z=values["wg_count_z"],
            workgroup_size_x=values["wg_size_x"],
            workgroup_size_y=values["wg_size_y"],
            workgroup_size_z=values["wg_size_z"],
        )


def create_kernel_module(spec: KernelModuleSpec) -> KernelModuleShell:
    """Build the target record and an empty kernel shell described by ``spec``."""
    ops = kernel_module_ops(spec.target_preset)
    if target_preset_amdgpu_kind(spec.target_preset):
        raise ValueError("AMDGPU target presets are not supported by this workbench yet")
    module, builder = module_builder(ops=ops)
    target_symbol = spec.target_symbol or sanitize_symbol(spec.target_preset, fallback="target")
    builder.target.generic(symbol=target_symbol, kind="reference")

    _check_ordinals(spec.arguments, "arguments")
    _check_ordinals(spec.config_arguments, "config_arguments")
    body_names = NameAllocator()
    body_args = [
        builder.value(body_names.reserve_or_fresh(sanitize_identifier(a.name, "arg")), a.type)
        for a in sorted(spec.arguments, key=lambda a: a.ordinal)
    ]
    config_names = NameAllocator()
    config_region = builder.region(
        args=[
            (config_names.reserve_or_fresh(sanitize_identifier(a.name, "arg")), a.type)
            for a in sorted(spec.config_arguments, key=lambda a: a.ordinal)
        ]
    )
    body_region = Region()
    kernel_symbol = sanitize_symbol(spec.callee, fallback="kernel")
    builder.kernel.def_(
        target=target_symbol,
        export_symbol=spec.export_symbol,
        callee=kernel_symbol,
        args=body_args,
        config=config_region,
        body=body_region,
    )
    kernel = builder.last_op
    if spec.launch_config is not None:
        build_static_launch_config(builder, config_region, spec.launch_config)
    config_args = dict(
        zip(sorted(a.ordinal for a in spec.config_arguments), config_region.blocks[0].args)
    )
    launch_args = dict(zip(sorted(a.ordinal for a in spec.arguments), body_region.blocks[0].args))
    return KernelModuleShell(
        module,
        builder,
        config_region,
        body_region,
        config_args,
        launch_args,
        target_symbol,
        kernel_symbol,
        kernel,
    )


def _check_ordinals(specs: Sequence, what: str) -> None:
    ordinals = [s.ordinal for s in specs]
    if sorted(ordinals) != list(range(len(ordinals))):
        raise ValueError(
            f"{what} ordinals must be 0..{len(ordinals) - 1} without gaps or "
            f"repeats, got {ordinals}"
        )


def print_loom_module(
    module: Module,
    *,
    ops: OpRegistry | Iterable[OpDef] | None = None,
    print_locations: bool = False,
) -> str:
    """Canonical text of ``module`` (every declared op when ``ops`` is None)."""
    return print_module(module, ops=ops, print_locations=print_locations)
