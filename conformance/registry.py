"""Find and construct the implementations under test.

Sources, most specific first: ``--impl-cmd NAME=COMMAND`` (a program speaking the subprocess
protocol), ``--impl NAME`` for a bundled adapter or one published under the entry-point group
``delta_checkpoint_conformance.implementations`` (value ``module:Class``). With neither option the
bundled adapters are used: ``reference``, ``delta-spark``, ``deltalake``, ``deltalake-cmd``
(the example subprocess adapter in ``conformance/examples/deltalake_harness.py``) and ``kernel-java``
(Delta Kernel Java behind the same protocol, ``conformance/adapters/kernel_java.py``).
"""

from __future__ import annotations

import importlib
import shlex
import sys
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path

from conformance.adapter import Implementation

ENTRY_POINT_GROUP = "delta_checkpoint_conformance.implementations"
EXAMPLE_HARNESS = Path(str(resources.files("conformance") / "examples" / "deltalake_harness.py"))

BUNDLED: dict[str, str] = {
    "reference": "conformance.adapters.reference:ReferenceImplementation",
    "delta-spark": "conformance.adapters.delta_spark:DeltaSparkImplementation",
    "deltalake": "conformance.adapters.deltalake:DeltalakeImplementation",
    "kernel-java": "conformance.adapters.kernel_java:KernelJavaImplementation",
}
BUNDLED_COMMANDS: dict[str, str] = {
    "deltalake-cmd": f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE_HARNESS))}",
}
DEFAULT_IMPLEMENTATIONS: tuple[str, ...] = (
    "reference",
    "delta-spark",
    "deltalake",
    "deltalake-cmd",
    "kernel-java",
)
#: The bundled writers, one adapter each (not ``deltalake-cmd``): ``--cross-writers bundled``.
BUNDLED_WRITERS: tuple[str, ...] = ("reference", "delta-spark", "deltalake", "kernel-java")


def _entry_points() -> dict[str, str]:
    return {ep.name: ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _load(target: str) -> Implementation:
    module_name, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    impl: Implementation = cls()
    return impl


@dataclass
class Registry:
    """The selected implementations: constructed ones and the ones that could not be."""

    implementations: dict[str, Implementation] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)  # name -> why
    #: Writers taken only so that the implementations under test can read their outputs (the cross
    #: tests): they are parametrised as writers of cross tests only and are never scored.
    cross_writers: set[str] = field(default_factory=set)
    #: Programs that started but broke the subprocess protocol at ``hello``: their tests fail
    #: (never skip), since the program is there and misbehaves.
    misbehaving: set[str] = field(default_factory=set)

    @property
    def names(self) -> list[str]:
        return [*self.implementations, *self.unavailable]

    def close(self) -> None:
        for impl in self.implementations.values():
            try:
                impl.close()
            except Exception as exc:  # closing must not hide test results
                print(f"[conformance] closing {impl.info.name} failed: {exc}", file=sys.stderr)


def parse_impl_cmd(value: str) -> tuple[str, str]:
    name, sep, command = value.partition("=")
    if not sep or not name.strip() or not command.strip():
        raise ValueError(f"--impl-cmd expects NAME=COMMAND, got {value!r}")
    return name.strip(), command.strip()


def build_registry(
    names: list[str],
    commands: list[str],
    *,
    timeout_s: float | None = None,
    cross_writers: list[str] | None = None,
) -> Registry:
    """The implementations ``names`` and ``commands`` select; ``timeout_s`` bounds each subprocess answer.

    ``cross_writers``: bundled writers whose outputs the selected implementations read live in the
    cross tests, without being tested themselves (none by default: the frozen outputs of every
    bundled writer are fixtures, ``fixtures/foreign/``, which a reader reads with no JVM).
    """
    from conformance.adapters.command import DEFAULT_TIMEOUT_S, CommandImplementation, ProtocolViolation

    def start(name: str, command: str) -> None:
        try:
            registry.implementations[name] = CommandImplementation(
                name, command, timeout_s=timeout_s or DEFAULT_TIMEOUT_S
            )
        except ProtocolViolation as exc:
            registry.unavailable[name] = str(exc)
            registry.misbehaving.add(name)
        except OSError as exc:  # the program cannot be started at all
            registry.unavailable[name] = f"{type(exc).__name__}: {exc}"

    registry = Registry()
    known = {**BUNDLED, **_entry_points()}
    wanted_commands = dict(parse_impl_cmd(c) for c in commands)
    selected = list(names) or ([] if wanted_commands else list(DEFAULT_IMPLEMENTATIONS))
    cross_writers = list(BUNDLED_WRITERS) if cross_writers == ["bundled"] else list(cross_writers or [])
    support = [w for w in cross_writers if w not in selected and w not in wanted_commands]
    unknown = [w for w in support if w not in known]
    if unknown:
        raise ValueError(f"--cross-writers: no bundled writer {unknown} (known: {', '.join(sorted(known))})")
    selected += support
    for name in selected:
        if name in wanted_commands:
            continue
        try:
            if name in known:
                registry.implementations[name] = _load(known[name])
            elif name in BUNDLED_COMMANDS:
                start(name, BUNDLED_COMMANDS[name])
            else:
                registry.unavailable[name] = f"no adapter named {name!r} (known: {', '.join(sorted(known))})"
        except ProtocolViolation as exc:  # a bundled program (kernel-java) that answers hello wrongly
            registry.unavailable[name] = str(exc)
            registry.misbehaving.add(name)
        except Exception as exc:  # an adapter that cannot start is reported, not fatal for the others
            registry.unavailable[name] = f"{type(exc).__name__}: {exc}"
    for name, command in wanted_commands.items():
        start(name, command)
    from conformance.adapter import Role

    for name in support:  # a writer that cannot start leaves its cross tests out, it is not a test result
        impl = registry.implementations.get(name)
        registry.unavailable.pop(name, None)
        registry.misbehaving.discard(name)
        if impl is not None and Role.WRITER in impl.info.roles:
            registry.cross_writers.add(name)
        elif impl is not None:
            registry.implementations.pop(name).close()
    return registry
