"""Controls and siblings for linterr (issue 41): an error that a snippet's missing
import leaves certain stays an error. A name left unimported is read as its usual
import; the cap to a warning is lifted only where the file leaves that name one
meaning (`os`, `torch`; `nn`/`dist`/`DDP` in a file that uses torch or through
what only torch's has). Each program is real code, linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str) -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic of `rule`."""
    return [(d.line, d.severity) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


class TestMasterPortOutOfRange:
    """`os` means nothing but the standard library's: an assumed `import os` decides."""

    rule = "master-port-out-of-range"

    def test_control_a_port_in_range_is_not_reported(self):
        code = """
            os.environ["MASTER_ADDR"] = "localhost"
            os.environ["MASTER_PORT"] = "29500"
        """
        assert found(code, self.rule) == []

    def test_sibling_os_unimported_the_error_stays_an_error(self):
        code = """
            os.environ["MASTER_ADDR"] = "localhost"
            os.environ["MASTER_PORT"] = "123478"
        """
        assert found(code, self.rule) == [(2, "error")]

    def test_sibling_with_a_name_another_library_may_own_it_is_a_warning(self):
        # `pl` unimported may be polars as much as Lightning: the reading is not certain
        code = """
            os.environ["MASTER_PORT"] = "123478"
            frame = pl.DataFrame({"a": [1]})
        """
        assert found(code, self.rule) == [(1, "warning")]


class TestWrapperMethodCall:
    """`DDP` unimported: torch's when the file uses torch, or given torch DDP's keywords."""

    rule = "wrapper-method-call"

    def test_control_the_method_through_module_is_not_reported(self):
        code = """
            autoencoder = DDP(autoencoder, device_ids=[device], output_device=rank)
            z = autoencoder.module.encode_stage_2_inputs(batch)
        """
        assert found(code, self.rule) == []

    def test_sibling_ddp_with_torch_keywords_is_an_error(self):
        code = """
            autoencoder = DDP(autoencoder, device_ids=[device], output_device=rank)
            z = autoencoder.encode_stage_2_inputs(batch)
        """
        assert found(code, self.rule) == [(2, "error")]

    def test_sibling_bare_ddp_without_torch_evidence_is_a_warning(self):
        # DDP(model) alone, in a file that shows no torch: apex's DDP reads the same
        code = """
            autoencoder = DDP(autoencoder)
            z = autoencoder.encode_stage_2_inputs(batch)
        """
        assert found(code, self.rule) == [(2, "warning")]

    def test_sibling_nn_unimported_outside_a_torch_file_is_a_warning(self):
        # `nn.Linear` alone could be flax.linen's or haiku's: `nn` stays open, and so the cap
        code = """
            net = nn.Linear(2, 2)
            autoencoder = DDP(net, device_ids=[device])
            z = autoencoder.encode_stage_2_inputs(batch)
        """
        assert found(code, self.rule) == [(3, "warning")]

    def test_sibling_nn_unimported_in_a_torch_file_is_an_error(self):
        code = """
            import torch
            net = nn.Linear(2, 2)
            autoencoder = DDP(net, device_ids=[torch.cuda.current_device()])
            z = autoencoder.encode_stage_2_inputs(batch)
        """
        assert found(code, self.rule) == [(4, "error")]


class TestSpawnArgsNotTuple:
    """`mp` unimported is torch's where the file calls `mp.spawn` (the standard
    library's multiprocessing, often imported as mp beside torch, has none)."""

    rule = "spawn-args-not-tuple"

    def test_control_a_real_tuple_is_not_reported(self):
        code = """
            def main(rank, lr):
                pass

            if __name__ == "__main__":
                mp.spawn(main, nprocs=2, args=(0.1,))
        """
        assert found(code, self.rule) == []

    def test_sibling_mp_spawn_unimported_the_error_stays_an_error(self):
        code = """
            def main(rank, lr):
                pass

            if __name__ == "__main__":
                mp.spawn(main, nprocs=2, args=(0.1))
        """
        assert found(code, self.rule) == [(5, "error")]

    def test_sibling_with_f_unimported_it_is_a_warning(self):
        # `F` left unimported might be pyspark's functions: the reading claims no certainty
        code = """
            def main(rank, lr):
                return F.relu(lr)

            if __name__ == "__main__":
                mp.spawn(main, nprocs=2, args=(0.1))
        """
        assert found(code, self.rule) == [(5, "warning")]


class TestUnexpectedArgument:
    """A bare `DistributedDataParallel` in a torch file that never mentions apex is torch's."""

    rule = "unexpected-argument"

    def test_control_a_right_keyword_is_not_reported(self):
        code = """
            import torch
            torch.distributed.init_process_group(backend="nccl")
            model = DistributedDataParallel(model, device_ids=[i], output_device=i)
        """
        assert found(code, self.rule) == []

    def test_sibling_a_misspelt_keyword_in_a_torch_file_is_an_error(self):
        code = """
            import torch
            torch.distributed.init_process_group(backend="nccl")
            model = DistributedDataParallel(model, devices_ids=[i], output_device=i)
        """
        assert found(code, self.rule) == [(3, "error")]

    def test_sibling_a_file_that_mentions_apex_stays_a_warning(self):
        code = """
            import torch
            # with apex.parallel this would be apex's DDP
            model = DistributedDataParallel(model, devices_ids=[i])
        """
        assert found(code, self.rule) == [(3, "warning")]
