"""A vCPU-ballooning policy in a few lines of Python: an example of prototyping a scheduling
idea in vmsched without touching the Rust core.

Models: the idea of FlexCore (seed 000, vCPU ballooning driven by pause-loop exits), reduced
to one rule. Every ``interval_ms`` it reads each VM's PLE exits since the last step; when some
VM exits more than ``ple_per_vcpu_s`` times per online vCPU and second while the host is
overcommitted, it shrinks every VM to its share of the pCPUs (equal shares, at least one
vCPU); when no VM exits above a tenth of that for ``calm_steps`` steps in a row, it gives the
vCPUs back.

Leaves out (see the built-in ``flexcore`` controller, docs/controllers.md, for the seed's
rule): the ratio of PLE exits to dispatches over a 3 s window, weights, binding the remaining
vCPUs to pCPUs. The thresholds are illustrations, not fitted or sourced.

Run it on one scenario::

    vmsched run scenarios/sync-heavy-2vm.toml --scheduler cfs \\
        --python-controller examples/policies/ple_balloon.py:PleBalloon

or side by side with every other policy (``examples/policies/contenders.toml``)::

    vmsched arena --contenders examples/policies/contenders.toml --only sync-heavy
"""

import vmsched


class PleBalloon(vmsched.Controller):
    name = "ple-balloon"

    def __init__(self, interval_ms=500.0, ple_per_vcpu_s=2000.0, calm_steps=4):
        self.interval_ms = interval_ms
        self.ple_per_vcpu_s = ple_per_vcpu_s
        self.calm_steps = calm_steps
        self.last = None
        self.calm = 0
        self.ballooned = False

    def step(self, stats):
        ple = [sum(v["ple_exits"] for v in vm["vcpus"]) for vm in stats["vms"]]
        last, self.last = self.last, (stats["now_ns"], ple)
        if last is None:
            return []
        seconds = (stats["now_ns"] - last[0]) / 1e9
        rates = [(now - before) / seconds / max(1, vm["online_vcpus"])
                 for now, before, vm in zip(ple, last[1], stats["vms"])]
        active = [vm for vm in stats["vms"] if not vm["finished"]]
        configured = sum(len(vm["vcpus"]) for vm in active)
        pcpus = len(stats["pcpus"])
        if not self.ballooned and configured > pcpus and max(rates) > self.ple_per_vcpu_s:
            self.ballooned, self.calm = True, 0
            share = max(1, pcpus // max(1, len(active)))
            return [vmsched.SetOnlineVcpus(vm=i, count=min(share, len(vm["vcpus"])))
                    for i, vm in enumerate(stats["vms"]) if not vm["finished"]]
        if self.ballooned:
            self.calm = self.calm + 1 if max(rates) < self.ple_per_vcpu_s / 10 else 0
            if self.calm >= self.calm_steps or configured <= pcpus:
                self.ballooned = False
                return [vmsched.SetOnlineVcpus(vm=i, count=len(vm["vcpus"]))
                        for i, vm in enumerate(stats["vms"])
                        if not vm["finished"] and vm["online_vcpus"] < len(vm["vcpus"])]
        return []
