"""Helpers for frontends ("importers") that build Loom modules; see :mod:`loom.importers.core`."""

from loom.importers.core import (
    KernelArgumentSpec,
    KernelConfigArgumentSpec,
    KernelLaunchConfigSpec,
    KernelModuleShell,
    KernelModuleSpec,
    NameAllocator,
    build_static_launch_config,
    create_kernel_module,
    kernel_module_ops,
    normalize_launch_tuple,
    normalize_workgroup_size,
    print_loom_module,
    sanitize_identifier,
    sanitize_symbol,
    target_preset_amdgpu_kind,
)

__all__ = [
    "KernelArgumentSpec",
    "KernelConfigArgumentSpec",
    "KernelLaunchConfigSpec",
    "KernelModuleShell",
    "KernelModuleSpec",
    "NameAllocator",
    "build_static_launch_config",
    "create_kernel_module",
    "kernel_module_ops",
    "normalize_launch_tuple",
    "normalize_workgroup_size",
    "print_loom_module",
    "sanitize_identifier",
    "sanitize_symbol",
    "target_preset_amdgpu_kind",
]
