"""`tether.registry.Registry`: registration once by name, lookups with a located error."""

import pytest

from tether.errors import TetherError
from tether.registry import Registry


def test_registers_directly_and_as_a_decorator_and_lists_names_sorted():
    reg: Registry[object] = Registry("planner")
    reg.register("memory", 1)

    @reg.register("llm")
    def llm():
        return 2

    assert list(reg) == ["llm", "memory"]
    assert reg["memory"] == 1 and reg.get("llm") is llm and len(reg) == 2


def test_an_unknown_name_is_a_located_error_with_a_suggestion():
    reg: Registry[int] = Registry("planner")
    reg.register("memory", 1)
    with pytest.raises(TetherError) as exc:
        reg.get("memroy", where="plan.yaml:3: ")
    assert str(exc.value) == ("plan.yaml:3: unknown planner 'memroy' (did you mean 'memory'?); "
                              "known: memory")
    assert reg.get("memroy", 7) == 7


def test_registering_a_name_twice_is_a_programming_error():
    reg: Registry[int] = Registry("verifier")
    reg.register("sim", 1)
    with pytest.raises(ValueError, match="verifier 'sim' registered twice"):
        reg.register("sim", 2)


def test_unregistering_removes_a_name_and_ignores_an_unknown_one():
    reg: Registry[int] = Registry("policy")
    reg.register("fake", 1)
    reg.unregister("fake")
    reg.unregister("never")
    assert list(reg) == [] and "fake" not in reg


def test_membership_of_an_unknown_name_is_false_not_an_error():
    reg: Registry[int] = Registry("policy")
    reg.register("expert", 1)
    assert "expert" in reg and "expret" not in reg
