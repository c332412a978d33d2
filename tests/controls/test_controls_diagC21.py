"""Controls and siblings for diagC21 (issue 35: a hang the reporter states, told at the stage where the log stops, in the
words of the job it is; and a thread's title that only names a crash). `test_sibling_*` is the input that gets the case
or the verdict, `test_control_*` the nearest one that must not. Lines are real ones (threads named)."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit


def head(text: str):
    return api.diagnose(text).findings[0]


def said_hang(text: str):
    return next(f for f in api.diagnose(text).findings if f.id == "log-said-hang")


# huggingface/text-generation-inference#2842 (heldout20, failed): the title says the server hangs; the paste is the
# launcher's argument dump, cut before its closing brace
TGI_TITLE = "# TGI hangs when running two extremely long prompts at once\n\n[turn 0 by JohnTheNerd, continued]\nTGI logs:\n"
TGI_ARGS = ("2024-12-14T03:35:16.371090Z  INFO text_generation_launcher: Args {\n"
            '    model_id: "llama-3.3-70b",\n    revision: None,\n    validation_workers: 2,\n    sharded: Some(\n'
            "        true,\n    ),\n    num_shard: Some(\n        2,\n    ),\n    max_concurrent_requests: 128,\n"
            "    cuda_memory_fraction: 1.0,\n")
# huggingface/text-generation-inference#2728 (heldout20, failed): the launcher waits for its shard
TGI_SHARD = "".join(f"2024-11-06T04:4{i}:34.739375Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0\n"
                    for i in range(3))
VLLM_UP = ("INFO 11-04 22:05:09 api_server.py:912] vLLM API server version 0.7.3\n"
           "INFO:     Started server process [37035]\nINFO:     Waiting for application startup.\n"
           "INFO:     Application startup complete.\n")
# facebookresearch/mmf#772 (heldout7, failed): detectron2 prints its arguments, then nothing on 2 GPUs
MMF_ARGS = ("Command Line Args: Namespace(config_file='configs/R-50-grid.yaml', dist_url='tcp://127.0.0.1:50170', "
            "eval_only=False, machine_rank=0, num_gpus=2, num_machines=1, opts=[], resume=False)\n")
MMF_SAID = "and looks the system is stuck here as, with 1 gpu it starts training\n"
# allenai/allennlp#4892 (heldout8, failed): the reporter's sentence, then out.log's parameters, the paste cut after a stamp
ALLENNLP_SAID = "I use allennlp frame for nlp learning. When using single gpu, it works. But when I change it to multi gpus, it will get stuck at the beginning.\n\n```\n"
ALLENNLP_LOG = ("2020-12-25 14:54:22,559 - INFO - allennlp.common.params - dataset_reader.lazy = False\n"
                "2020-12-25 14:54:22,559 - INFO - allennlp.common.params - dataset_reader.cache_directory = None\n"
                "2020-12-25 14:54:22,559 - INFO - allennlp.common.params - dataset_reader.max_instances = None\n")
# threestudio-project/threestudio#81 (heldout17, failed): all four ranks log joining; Lightning-AI/pytorch-lightning#13087
# (dev, failed): two of four
THREESTUDIO = ("# multi-gpu training gets get stuck\n\nShoufaChen \xb7 description \xb7 2023-05-30\n"
               "When I use four V100 GPUs, the program gets stuck as following:\n\n```\n"
               "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\nInitializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n"
               "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4\nInitializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n```\n")
LIGHTNING_TWO = ("When I use four GPUs, the program gets stuck as following:\n\n```\nGlobal seed set to 42\n"
                 "initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
                 "[2022-02-08 19:04:24,552][faiss.loader][INFO] - Loading faiss with AVX2 support.\n"
                 "initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n```\n")


class TestLogSaidHangServing:
    verdict = "log-said-hang"

    def test_sibling_a_servers_hang_in_a_cut_argument_dump_is_no_stop_at_set_up(self):
        found = head(TGI_TITLE + TGI_ARGS)
        assert found.id == "log-said-hang" and found.evidence["stage"] == "serving-cut"
        assert "block opened at line 5" in found.title and "server" in found.title
        assert "shard" in found.fix and "KV cache" in found.why
        assert "data loader" not in found.why + found.fix and "DDP" not in found.why + found.fix
        assert report_exit(api.diagnose(TGI_TITLE + TGI_ARGS)) == 1

    def test_sibling_a_server_waiting_for_its_shard_stops_while_it_starts(self):
        found = head(TGI_TITLE + TGI_SHARD)
        assert found.evidence["stage"] == "serving-setup" and "while the server starts" in found.title
        assert "shard" in found.why and "num_workers" not in found.fix

    def test_sibling_a_server_up_and_waiting_hangs_in_serving_its_requests(self):
        # vLLM's API server as dev7w's ColorDavid/ARPO nohup.out prints it, up and waiting for requests
        found = head(TGI_TITLE + VLLM_UP)
        assert found.evidence["stage"] == "serving-requests" and "while serving requests" in found.title
        assert "KV cache" in found.why and "--max-num-seqs" in found.fix

    def test_control_a_training_jobs_steps_beside_a_server_keep_the_training_words(self):
        # (an RL job's rollout server, then the trainer's own epoch line: tensorpack's, heldout17's ganimorph#15)
        step = "[0427 10:25:10 @base.py:275] Start Epoch 1 ...\n"
        found = head("the training gets stuck here:\n" + VLLM_UP + step)
        assert found.evidence["stage"] == "training" and "server" not in found.title

    def test_control_the_server_lines_without_a_sentence_do_not_decide(self):
        assert head(TGI_SHARD).id == "log-inconclusive"
        assert head("TGI logs:\n" + TGI_ARGS).id == "log-inconclusive"

    def test_control_a_training_jobs_argument_dump_keeps_the_training_words(self):
        found = head(MMF_ARGS + MMF_SAID)
        assert found.evidence["stage"] == "setup-at" and "server" not in found.evidence
        assert "after its arguments printed" in found.title and "DDP's broadcast" in found.why


class TestLogSaidHangStage:
    verdict = "log-said-hang"

    def test_sibling_the_last_set_up_lines_say_what_set_up_printed_last(self):
        # jiahuiyu/generative_inpainting#52 (heldout12): the model's summary, then it freezes
        said = "When I run train.py, the process freezes with:\n"
        line = ("[2018-05-28 05:14:54 @weights_viewer.py:60] Total size of trainable weights: 0G 10M 184K 136B "
                "(Assuming32-bit data type.)\n")
        found = head(said + line)
        assert found.evidence["stage"] == "setup-at" and "after the model's summary" in found.title
        # huggingface/transformers' loader line (dev's llamafactory-6116): weights loading
        found = head("the training gets stuck here:\nLoading checkpoint shards:  50%|█████     | 1/2 [00:03<00:03,  3.85s/it]\n")
        assert found.evidence["stage"] == "setup-at" and "its weights loading" in found.title

    def test_sibling_a_progress_bar_at_its_first_step_is_training(self):
        # affjljoo3581/GPT2#4 (heldout17, failed): with --gpus 4 the bar stays at 0/3000
        found = head("# Multi GPU mode is stuck at the beginning\n"
                     "Train GPT-2 model:   0%|          | 0/3000 [00:00<?, ?it/s]\n")
        assert found.evidence["stage"] == "training" and found.evidence["step"] == "0/3000"

    def test_control_a_loggers_level_lines_are_no_argument_dump(self):
        # uvicorn's own lines (dev7w's ARPO nohup.out), before its server says it is up
        found = head("the training gets stuck here:\nINFO:     Started server process [37035]\nINFO:     Waiting for application startup.\n")
        assert found.evidence["stage"] == "setup" and "set-up at" not in found.evidence

    def test_sibling_a_paste_cut_inside_a_line_is_no_place_the_job_stopped(self):
        found = head(ALLENNLP_SAID + ALLENNLP_LOG + "2020-12-25 14:54:22,559 -\n")
        assert found.evidence["stage"] == "cut" and "the paste is cut at line" in found.title
        assert "tail -n 50" in found.fix

    def test_control_the_same_paste_ending_on_a_whole_line_stops_there(self):
        found = head(ALLENNLP_SAID + ALLENNLP_LOG)
        assert found.evidence["stage"] == "setup-at" and "after its arguments printed" in found.title

    def test_sibling_the_reporters_set_up_step_where_the_log_shows_no_line(self):
        # mlcommons/algorithmic-efficiency#572 (heldout20, failed): the title names the step, the paste is nvidia-smi's
        title = "# Running on SLURM cluster with multiple GPUs gets stuck at dataset creation step\n"
        found = head(title)
        assert found.evidence["stage"] == "setup-said" and "at dataset creation step" in found.title
        assert "reporter's words" in found.title and "DDP's broadcast" in found.why

    def test_control_the_logs_own_last_line_names_the_stage_over_the_reporters_step(self):
        title = "# Running on SLURM cluster with multiple GPUs gets stuck at dataset creation step\n"
        found = head(title + MMF_ARGS)
        assert found.evidence["stage"] == "setup-at" and "the log's line 2" in found.title

    def test_sibling_a_paste_longer_than_what_is_read_does_not_show_where_it_stopped(self):
        found = head(ALLENNLP_SAID + ALLENNLP_LOG * 700)  # 2,100 lines: the reader reads 2,000
        assert found.evidence["stage"] == "unshown" and "last line" not in found.evidence

    def test_sibling_all_ranks_joined_tells_the_rendezvous_itself_once(self):
        found = head(THREESTUDIO)
        assert found.evidence["stage"] == "rendezvous-all" and found.evidence["joined"] == "4 of 4 ranks logged joining"
        assert "Every rank reached init_process_group" in found.why and "never reached" not in found.why

    def test_sibling_some_ranks_joined_tells_the_ones_that_never_did(self):
        found = said_hang(LIGHTNING_TWO)
        assert found.evidence["stage"] == "rendezvous-partial" and "only 2 of 4 ranks logged joining" in found.title
        assert "never shows joining" in found.why and "Every rank reached" not in found.why

    def test_control_no_count_says_neither_stage_alone(self):
        found = head("the program gets stuck as following:\n| distributed init (rank 4): env://, gpu 4\n")
        assert found.evidence["stage"] == "rendezvous" and "does not say how many" in found.why


# bmaltais/kohya_ss#1887 (heldout20, failed): the title names an out of memory, the paste shows the command's exit status
KOHYA = ("# source: https://github.com/bmaltais/kohya_ss/issues/1887\nbmaltais/kohya_ss \xb7 issue #1887 \xb7 closed \xb7 Python\n"
         "# SDXL: CUDA out of memory\n\n[turn 5 by tjthejuggler, continued]\n"
         "t_no_upscale', '--noise_offset=0.0', '--no_half_vae', '--full_bf16']' returned non-zero exit status 1.\n\n"
         "The following values were not passed to `accelerate launch` and had defaults used instead:\n")
# hpcaitech/ColossalAI#4470 (dev, failed): the run's own out of memory
OOM_LINE = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB (GPU 0; 79.20 GiB total capacity; "
            "76.06 GiB already allocated; 201.31 MiB free; 77.51 GiB reserved in total by PyTorch)\n")


class TestCudaOomTitleLabel:
    verdict = "cuda-oom"

    def test_control_a_titles_label_alone_is_no_out_of_memory_of_this_log(self):
        report = api.diagnose(KOHYA)
        assert all(f.id != "cuda-oom" for f in report.findings) and report_exit(report) == 1
        found = report.findings[0]
        assert found.id == "unrecognised-failure" and "SDXL: CUDA out of memory" in found.evidence["the title says"]
        # what would decide it: the run's own line in the whole log, and the finding the title's word stands for
        assert "grep -n -i 'out of memory'" in found.evidence["what decides it"] and "cuda-oom" in found.evidence["what decides it"]

    def test_sibling_the_same_title_with_the_logs_own_oom_line_keeps_cuda_oom(self):
        assert head(KOHYA + OOM_LINE).id == "cuda-oom"

    def test_sibling_a_title_that_quotes_the_programs_message_keeps_it(self):
        # justinpinkney/stable-diffusion#30 (heldout8): the title copies torch's message
        quoted = KOHYA.replace("# SDXL: CUDA out of memory", "# RuntimeError: CUDA out of memory. Tried to allocate 58.00 MiB "
                               "(GPU 0; 23.88 GiB total capacity; 21.66 GiB already allocated)")
        assert head(quoted).id == "cuda-oom"
