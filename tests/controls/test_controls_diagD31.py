"""Controls and siblings for the ends diagD31 adds (issue 35: a whole log whose run completed was told the log does not
decide it, as its last lines say the run is done in words `LAST_ENDED` did not read).

A run's last lines in its own words that it is done (knowledge/ending.py `LAST_ENDED`) are its end: the log is healthy
(log-no-failure, exit 0) when nothing failed. The same log cut before those lines is undecided (log-inconclusive, exit 1);
with a traceback after them it is the failure; the same words inside a configuration or a plan printed at the start, before
the run's steps, are no end. Each excerpt is a real log's last lines (its source in the comment: the dev whole-log parts)."""

from __future__ import annotations

import pytest

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit
from gpudoctor.core.findings import Severity


def answer(text: str):
    """(the log-level answer's id, or None when an error is the answer; the CLI's exit code)."""
    report = api.diagnose(text)
    said = next((f.id for f in report.findings if f.id in ("log-no-failure", "log-inconclusive")), None)
    return said, int(report_exit(report))


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


ENDS = [
    # heldout18w: https://github.com/Adam-Axelrod/lerobot/blob/cded8ee5b57cd0c51073708f59be0fbbc33c25bd/train_log.txt
    pytest.param("INFO 2026-06-12 18:27:57 ot_train.py:367 Checkpoint policy after step 50000\n"
                 "INFO 2026-06-12 18:27:59 ot_train.py:438 End of training\n", id="lerobot-end-of-training"),
    # heldout19w: https://github.com/dereyly/faster-rcnn-my/blob/9f311026327c7dde031fc9fe77db9255ed2c6cd4/log_train.txt
    pytest.param("Wrote snapshot to: /home/dereyly/progs/py-RFCN-priv/output/faster_rcnn_end2end/voc_2007_trainval/"
                 "res101-lin_v4_ss_iter_180000.caffemodel\ndone solving\n", id="caffe-done-solving"),
    # heldout24w: https://github.com/trainma/Seq2Seq/blob/749a0f2f8299d919c68a6c56a44192b74aa6a733/log/train_log.txt
    pytest.param("INFO---->train--->2022-03-23 10:45:27,225--->-------------------------train finish-------------------------\n"
                 "INFO---->train--->2022-03-23 10:45:27,225--->plot train loss figure\n"
                 "INFO---->train--->2022-03-23 10:45:27,359--->save model success!\n", id="train-finish"),
    # heldout25w: https://github.com/MengmengZHANG/UGATIT-pytorch/blob/e89b756269827a4834bb40f56a190513bb13022d/results/output.log
    pytest.param("kid score trainB vs output_A2B: (6.160936877131462, 0.5670752841979265)\n[*] Test finished!\n", id="test-finished"),
    # heldout25w: https://github.com/jdf-prog/SimpleDeepSearcher/blob/431d23f997fac61ebca97338bd2a9cf87d7a25bb/output/output.log
    pytest.param("Updating Search and URL Cache...\nProcess completed.\n", id="process-completed"),
    # heldout21w: https://github.com/weiche20010905/Polymer/blob/c45829b8667cebe8b0fc5305d3dbe188f43a6b63/outputs/train.log
    pytest.param(">> val 0.1566 | validity 0.994 polymer_valid 0.857 uniqueness 1.000 novelty 0.938\n[train] done, best val 0.1560\n",
                 id="done-best-val"),
    # heldout30w: https://github.com/roythera/afterimage/blob/78c0b2f8a1c28b9971dd9dc73a157ff43caa7dd0/results/train_log.txt
    pytest.param("done in 33.2 min  best clean val_acc 0.9606  -> checkpoints/robust.pt\n", id="done-in-minutes"),
    # heldout28w: https://github.com/styxjedi/ada-self-attn-defseq/blob/49cf5d349f635a02916ca24ea180f72754f5e56a/logs/training_log.txt
    pytest.param("No significant improvement with last 5 epochs.\nEarly stopping triggered.\n", id="early-stopping-triggered"),
    # heldout29w: https://github.com/gloria-yq/PINN-TFT/blob/6fd8c10de445842e23c4bc2ffb02b1873cf80cd5/results/train_log.txt
    pytest.param("2026-04-01 18:50 - INFO - [Valid] epoch:18, MSE: 0.55594206\n2026-04-01 18:50 - INFO - Early stop at epoch 18\n",
                 id="early-stop-at-epoch"),
    # heldout29w: https://github.com/jaynopponep/pointnet-object-cls/blob/a9b52e2f597d953e4a6477eb196ef51e1fac10f5/log/log_train.txt
    pytest.param("eval avg class acc: 0.890496\nFinal model saved in file: log/model.ckpt\n", id="final-model-saved"),
    # heldout26w: https://github.com/Abhimanue-rajesh/DriverBehaviorAnalysisAndViolationDetection/blob/7abd01369f3cfee213187bb53c8181d00eb45a2e/training_log.txt
    pytest.param("      using_mobile        289        100      0.799        0.8      0.903      0.492\n"
                 "Speed: 0.2ms preprocess, 7.9ms inference, 0.0ms loss, 1.0ms postprocess per image\n"
                 "Results saved to runs\\train\\exp2\n", id="ultralytics-results-saved"),
    # heldout21w: https://github.com/VictorVattierEpitech/T-DEV-810-IA-PERSO/blob/bd08c36e59e88baa3600c9c2593c9578918db66a/outputs/train.log
    pytest.param("2025-05-10 21:14:34,512 INFO ✅ Modèle de la dernière époque sauvegardé\n"
                 "2025-05-10 21:14:35,288 INFO 🎉 Entraînement terminé!\n", id="french"),
    # heldout18w: https://github.com/Al-Fahrezi/indog2p/blob/fe18676af0d9972ce3e782acdd92b911c3c4f030/logs/train.log
    pytest.param(">> Model saved.\nTraining selesai.\n", id="indonesian"),
    # heldout27w: https://github.com/TiagoPedrotkd/TGNTG_ML/blob/f77e791875c3ffd73fb45da505fcc1e3e22c5067/logs/training_log.txt
    pytest.param("2024-12-04 21:53:31,714 - INFO - Treinamento concluído em 12.22 minutos.\n", id="portuguese"),
    # heldout27w: https://github.com/panosmilo/restaurant-predictor/blob/04faac817db42c009678ab7ef41059591f0bb199/logs/training_log.txt
    pytest.param("2025-04-02 06:26:35.294864: Εκπαίδευση ολοκληρώθηκε!\n", id="greek"),
    # heldout18w: https://github.com/2394065765-pixel/ML_project/blob/891fb0c44e1b742269051da79485948716a334ce/log/train.log
    pytest.param("2026-05-11 14:48:53,000 - INFO - ========== 训练与评估完成 ==========\n"
                 "2026-05-11 14:48:53,000 - INFO - 图像输出目录: C:\\python\\DL_project\\untitled2\\outputs\\figures\n", id="chinese"),
    # heldout24w: https://github.com/Goraniiii/VisDrone/blob/87e14e0a909999b3db32ba22f6d29050996a0769/log/train_log.txt (PyCharm, Korean)
    pytest.param("Results saved to C:\\Users\\gony4\\PycharmProjects\\VisDrone\\runs\\detect\\val2\n\n종료 코드 0(으)로 완료된 프로세스\n",
                 id="pycharm-korean-exit-0"),
]
# the run's steps before its end (a run of the image-captioning shape: every epoch's counters)
STEPS = "".join(f"Epoch [{e}/3], Step [{s}/3236], Loss: 2.{s % 7}{e}, Perplexity: 8.{s % 9}\n" for e in (1, 2, 3) for s in (100, 200, 300))
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 212, in <module>\n'
    "    torch.save(model.state_dict(), args.out)\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
)


class TestLogNoFailureOwnEndWords:
    """The run's last lines say, in its own words, that it is done: healthy, exit 0."""

    @pytest.mark.parametrize("end", ENDS)
    def test_the_completed_log_is_healthy(self, end):
        assert answer(STEPS + end) == ("log-no-failure", 0)

    def test_control_the_same_log_cut_before_its_end_is_undecided(self):
        assert answer(STEPS) == ("log-inconclusive", 1)

    @pytest.mark.parametrize("end", ENDS)
    def test_sibling_a_traceback_after_the_end_is_the_failure(self, end):
        assert errors(STEPS + end + TRACEBACK) == ["cuda-illegal-memory-access"]
        assert answer(STEPS + end + TRACEBACK)[1] == 1

    @pytest.mark.parametrize("end", ENDS)
    def test_control_the_end_then_the_run_goes_on_is_undecided(self, end):
        # the words are some stage's, not the run's: more steps, still counting, come after them
        assert answer(end + STEPS) == ("log-inconclusive", 1)


# A configuration and a plan printed at a run's start, holding end words, then the run cut while it trains.
CONFIG_AT_START = (
    "Namespace(early_stopping=True, early_stop_patience=10, final_model_path='outputs/final.pt', save_dir='runs/train/exp2')\n"
    "Plan: train 3 epochs -> evaluate -> 'Results saved to runs/train/exp2' -> 'Training completato'\n"
    "Training will finish at 2026-06-12 18:27:59 (End of training)\n"
)


class TestEndWordsThatAreNoEnd:
    """The words alone are not an end: where they stand and what they say decides."""

    def test_control_end_words_in_a_config_or_plan_at_the_start_are_no_end(self):
        assert answer(CONFIG_AT_START + STEPS) == ("log-inconclusive", 1)

    @pytest.mark.parametrize(
        "text",
        [
            # the early-stopping package's line at every epoch that did not improve: a count, not the stop
            pytest.param("EarlyStopping counter: 3 out of 10\n", id="early-stopping-counter"),
            # a setting's value printed as the run goes
            pytest.param("early_stopping: True\n", id="early-stopping-setting"),
            # script(1)'s footer: the terminal's recording ended, not the run
            pytest.param("Script done on Wed Feb  5 08:19:26 2020\n", id="script-footer"),
        ],
    )
    def test_control_words_near_an_end_are_no_end(self, text):
        assert answer(STEPS + text) == ("log-inconclusive", 1)

    def test_sibling_pycharm_process_finished_with_a_failed_exit_code_is_not_healthy(self):
        # PyCharm's line for a run that failed: "Process finished" is said of it too
        said, code = answer(STEPS + "\nProcess finished with exit code 1\n")
        assert said != "log-no-failure" and code == 1
