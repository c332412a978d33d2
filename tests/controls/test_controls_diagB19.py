"""Controls and siblings for diagB19 (issue 35 items 3 and 4: classes of messages whose words decide the cause, and two
whole-log misfires of heldout18w). A script or a program the command names that is not there (the interpreter's and the
shell's words) is path-not-found; an error about an API's shape pasted without its traceback is library-api-mismatch, built
from the names it gives; a failure that ended one command of a script is not dismissed by a later command's progress, nor by
the same failure printed again after a restart. `test_control_*` is the look-alike input that must not get the verdict,
`test_sibling_*` the nearest one that gets its own. Lines are real ones (sources named beside them)."""

from __future__ import annotations

from test_controls_detect8 import ENDED, head, head_id, healthy

from gpudoctor import api
from gpudoctor.core.findings import Severity

# dev7w: https://github.com/ddrous/HiddenReps nohup.log (the whole log is this line and the launch before it)
HIDDEN = "python: can't open file '/home/gb21553/Projects/HiddenReps/./limit_10_transformer_sine.py': [Errno 2] No such file or directory\n"
# heldout18w: https://github.com/Aayushjshah/ALPR-Number-Plate-Recognition train-log.txt (darknet never built)
DARKNET = "bash: ./darknet/darknet: No such file or directory\n"
# heldout10: simplescaling/s1#106 (launch.sh writes its log into log/, a folder not there)
REDIRECT = "train/launch.sh: line 5: log/sft_20250321-170440.txt: No such file or directory\n"


class TestPathNotFound:
    verdict = "path-not-found"

    def test_sibling_the_interpreter_told_to_run_a_script_that_is_not_there(self):
        found = head(HIDDEN)
        assert found is not None and found.id == "path-not-found"
        assert found.evidence["path"] == "/home/gb21553/Projects/HiddenReps/./limit_10_transformer_sine.py"
        assert "`ls -l /home/gb21553/Projects/HiddenReps/./limit_10_transformer_sine.py`" in found.fix

    def test_sibling_the_shell_told_to_run_a_program_or_write_a_file_that_is_not_there(self):
        assert head(DARKNET).evidence["path"] == "./darknet/darknet"
        assert head(REDIRECT).evidence["path"] == "log/sft_20250321-170440.txt"

    def test_control_a_builtins_folder_typed_by_hand_is_no_command_the_job_runs(self):
        # heldout16's phosa#29: the reporter cd-ing to look for deviceQuery (the shell's own line: read as before, not this class)
        assert head_id("bash: cd: /usr/local/cuda/samples/1_Utilities/deviceQuery: No such file or directory\n" + ENDED) != "path-not-found"

    def test_sibling_a_command_looked_up_on_the_path_is_another_story(self):
        assert head_id("bash: nvidia-smi: command not found\n") != "path-not-found"


FABRIC = "AttributeError: 'Fabric' object has no attribute 'init_module'\n"  # Lightning-AI/lit-llama#302, pasted alone
SYNTHEMOL = "TypeError: chemprop_predict() got an unexpected keyword argument 'use_gpu'\n"  # swansonk14/SyntheMol#5
THUNDER = "AttributeError: module 'torch.distributed' has no attribute 'ProcessGroupNCCL'\n"  # Lightning-AI/lightning-thunder#512


class TestLibraryApiMismatch:
    verdict = "library-api-mismatch"

    def test_sibling_an_api_shape_error_without_its_traceback_names_the_api(self):
        for text, named in ((FABRIC, "Fabric"), (SYNTHEMOL, "chemprop_predict()"), (THUNDER, "pip show torch")):
            found = head(text)
            assert found is not None and found.id == "library-api-mismatch" and found.severity is Severity.ERROR
            assert found.evidence["raised_by"].startswith("not shown") and named in found.fix

    def test_control_the_same_error_raised_in_your_code_is_yours(self):
        text = ('Traceback (most recent call last):\n  File "/home/u/finetune/lora.py", line 79, in main\n'
                "    with fabric.init_module():\n" + FABRIC)
        assert head_id(text) != "library-api-mismatch"

    def test_control_a_warning_that_quotes_such_an_error_is_no_failure_of_this_class(self):
        text = "[WARNING] apex not usable: AttributeError: module 'apex' has no attribute 'amp', using torch.cuda.amp\n" + ENDED
        assert head_id(text) != "library-api-mismatch"

    def test_control_an_attribute_of_none_is_no_api(self):
        assert head_id("AttributeError: 'NoneType' object has no attribute 'get'\n") != "library-api-mismatch"

    def test_sibling_a_library_frame_names_the_package_that_raised(self):
        text = ('Traceback (most recent call last):\n  File "/home/u/serve.py", line 9, in <module>\n    llm = LLM(model)\n'
                '  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/llm.py", line 212, in __init__\n'
                "    engine_args = EngineArgs(**kwargs)\n"
                "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'\n")  # huggingface/trl#3304
        found = head(text)
        assert found.id == "library-api-mismatch" and found.evidence["raised_by"] == "vllm"


# heldout18w: https://github.com/RafaelGreg18/tcc-def/blob/042168af732bbf154f9dad5070df97cd1e84e245/slurm.out (cut to its shape)
FLOWER = ("Command '['flower-simulation', '--app', '.', '--num-supernodes', '100', '--run-config', \"seed=42 num-rounds=150\"]' "
          "returned non-zero exit status 1.\n")
RESTARTED = "Criando modelo\nCriando perfis\nLoading project configuration... \nSuccess\n" + FLOWER + "Loading project configuration... \nSuccess\n" + FLOWER


class TestLogInconclusiveRestarted:
    verdict = "log-inconclusive"

    def test_control_the_same_failure_printed_again_by_the_run_started_again_stands(self):
        found = head(RESTARTED)
        assert found is not None and found.id == "unrecognised-failure" and "earlier_run" not in found.evidence

    def test_sibling_a_run_started_again_that_trains_leaves_the_earlier_failure_behind(self):
        text = RESTARTED.rsplit(FLOWER, 1)[0] + "".join(f"round {i} loss {1 / i:.3f}\n" for i in range(1, 6))
        assert head(text) is None and not healthy(text)
        assert next(f for f in api.diagnose(text).findings if f.id == "log-inconclusive").evidence.get("earlier run")


# heldout18w: https://github.com/mfkiwl/precise_gps/blob/afce48dba981d8916359a8cb8cb3fc46e224613d/slurm.out (cut to its shape):
# run_all.sh runs app.py once per dataset; one ends in a traceback, the next ones are killed, the last one trains
GPS_TB = ('Traceback (most recent call last):\n  File "app.py", line 40, in <module>\n    main(args)\n'
          '  File "/home/u/precise_gps/src/train.py", line 120, in train\n    opt.minimize(loss)\n'
          "tensorflow.python.framework.errors_impl.InvalidArgumentError:  Input matrix is not invertible.\n\nStartin process for naval.json ...\n")
GPS_KILLED = "/home/u/precise_gps/./run_all.sh: line 9:  5458 Killed                  python app.py -f \"$1/$file\"\nStartin process for power.json ...\n"
GPS_STEPS = "".join(f"Lasso 20 Step: {i}00 MLL: tf.Tensor(-15{i}0.5, shape=(), dtype=float64)\n" for i in range(1, 6))


class TestLogInconclusiveWentOn:
    verdict = "log-inconclusive"

    def test_control_a_later_commands_progress_does_not_dismiss_the_failed_ones(self):
        found = head(GPS_TB + GPS_KILLED + GPS_STEPS)
        assert found is not None and "went_on" not in found.evidence

    def test_sibling_the_same_process_going_on_after_its_traceback_went_on(self):
        text = GPS_TB.rsplit("\n\n", 1)[0] + "\n" + GPS_STEPS
        assert head(text) is None and not healthy(text)
