"""The capture's parts share one torch hook before and one after each optimizer step."""

from __future__ import annotations

import torch
from torch.optim import optimizer as optim_module

from jupyter_gpuprof.capture.capture_cost import COST
from jupyter_gpuprof.capture.optimizer_hooks import HookChain


def _optimizer():
    w = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([w], lr=0.1)
    w.grad = torch.ones(2)
    return opt


def test_callbacks_run_in_order_behind_one_torch_hook_charged_once():
    chain, seen = HookChain("register_optimizer_step_post_hook"), []
    before = len(optim_module._global_optimizer_post_hooks)
    offs = [chain.add(lambda o, a, k, i=i: seen.append(i)) for i in range(3)]
    assert len(optim_module._global_optimizer_post_hooks) == before + 1
    COST.reset()
    _optimizer().step()
    assert seen == [0, 1, 2]
    assert COST.calls == 1  # one charge for the three callbacks
    for off in offs:
        off()
    assert not chain.registered
    assert len(optim_module._global_optimizer_post_hooks) == before


def test_a_callback_removed_inside_the_hook_leaves_torch_iterating_safely():
    """torch iterates its hook dict while a hook runs: removing the last callback there must not
    change the dict (RuntimeError), the emptied chain keeps its hook and returns at once, and a
    removal outside any hook takes it out."""
    chain, seen = HookChain("register_optimizer_step_post_hook"), []
    before = len(optim_module._global_optimizer_post_hooks)
    offs: list = []

    def once(o, a, k):
        seen.append("once")
        offs[0]()

    offs.append(chain.add(once))
    # a hook after the chain's: torch goes on iterating its dict after the removal
    later = optim_module.register_optimizer_step_post_hook(lambda o, a, k: seen.append("later"))
    try:
        opt = _optimizer()
        opt.step()
        opt.step()
        assert seen == ["once", "later", "later"]
        assert chain.registered  # kept while torch was iterating
        keep = chain.add(lambda o, a, k: seen.append("again"))  # the same torch hook serves
        assert len(optim_module._global_optimizer_post_hooks) == before + 2
        opt.step()
        keep()
        assert not chain.registered and seen[-2:] == ["again", "later"]
    finally:
        later.remove()
    assert len(optim_module._global_optimizer_post_hooks) == before


def test_an_emptied_chain_whose_hook_is_last_goes_at_once():
    """The usual end of a capture inside its own step hook: nothing after ours in torch's dict,
    so its iterator stops without looking at the dict again and the hook can go at once."""
    chain = HookChain("register_optimizer_step_post_hook")
    before = len(optim_module._global_optimizer_post_hooks)
    offs: list = []
    offs.append(chain.add(lambda o, a, k: offs[0]()))
    opt = _optimizer()
    opt.step()  # no RuntimeError from torch's loop
    assert not chain.registered and len(optim_module._global_optimizer_post_hooks) == before
    opt.step()


def test_a_hook_kept_for_one_after_it_goes_once_it_is_last():
    chain, seen = HookChain("register_optimizer_step_post_hook"), []
    offs: list = []
    offs.append(chain.add(lambda o, a, k: offs[0]()))
    later = optim_module.register_optimizer_step_post_hook(lambda o, a, k: seen.append(1))
    opt = _optimizer()
    opt.step()
    assert chain.registered and seen == [1]  # torch still had "later" to call
    later.remove()
    opt.step()  # now last: its own call takes it out
    assert not chain.registered


def test_a_callback_swapped_inside_the_hook_keeps_its_place_and_the_torch_hook():
    """The session swaps its step callback for the baseline's short way from inside the hook:
    the new one runs from the next step in the old one's place, torch's dict is not touched
    while torch iterates it, and what the swap returns removes the new one."""
    chain, seen = HookChain("register_optimizer_step_post_hook"), []
    later = optim_module.register_optimizer_step_post_hook(lambda o, a, k: seen.append("later"))
    keys = list(optim_module._global_optimizer_post_hooks)
    try:
        def new(o, a, k):
            seen.append("new")

        removes: list = []

        def old(o, a, k):
            seen.append("old")
            removes.append(chain.swap(old, new))

        chain.add(lambda o, a, k: seen.append("first"), first=True)
        chain.add(old)
        chain.add(lambda o, a, k: seen.append("last"))
        opt = _optimizer()
        opt.step()  # (`later` was registered first: it runs before the chain's torch hook)
        assert list(optim_module._global_optimizer_post_hooks)[:len(keys)] == keys
        seen.clear()
        opt.step()
        assert seen == ["later", "first", "new", "last"]
        removes[0]()
        seen.clear()
        opt.step()
        assert seen == ["later", "first", "last"]
    finally:
        later.remove()
        chain.callbacks = ()
        chain._drop()
    assert not chain.registered
