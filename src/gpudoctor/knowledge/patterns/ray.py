"""What Ray prints when a process it runs for the job is gone: a worker or actor that died
without raising, or a whole node that stopped answering. Ray's own traceback on the driver
is not the cause: the cause is in the dead process's log on its node, or in that node's
kernel log (the OOM killer). Ray runs the ranks of verl, OpenRLHF, Ray Train and vLLM."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
RAY_LOGS = "/tmp/ray/session_latest/logs/"

PATTERNS = [
    pattern(
        "ray-node-dead",
        "launcher",
        CAUSE,
        E,
        "a Ray node died or stopped answering: its raylet is gone",
        r"has been marked dead because the (?:detector|monitor) has missed too many heartbeats"
        r"|Raylet is terminated: ip=(?P<node_ip>[\d.]+)"
        r"|\[RayletClient\] Raylet connection closed"
        r"|Raylet failed\. Shutting down"
        r"|Ray processes died",
        ("marked dead because", "Raylet is terminated", "Raylet connection closed", "Raylet failed", "Ray processes died"),
        why="""Each node runs a raylet that Ray's head (the GCS) checks by heartbeat. This one stopped: the
        raylet process was killed or crashed (the host's OOM killer, a SIGKILL, the node shut down or
        preempted) or, less often, the network or a saturated host delayed its heartbeats past the limit.
        Every worker and actor on that node is lost with it, so the tasks and actors there die next and the
        driver's errors about them are consequences. On a worker node kept by `ray start --block` (under
        SLURM or another batch scheduler) the same loss reads 'Ray processes died unexpectedly'.""",
        fix=f"on the lost node: dmesg -T | grep -i -E 'killed process|out of memory'; tail {RAY_LOGS}raylet.out (and gcs_server.out on the head); if the host was only slow, not dead, find what saturates it before raising RAY_health_check_failure_threshold / RAY_health_check_period_ms",
        examples=[
            (
                "2022-10-17 12:23:49,079 WARNING worker.py:1829 -- The node with node id: a5f8c09ad9446209fd4b33cdb4d5c9b27209e45c3c1d0d9c24f21baf and address: 10.132.0.6 and node name: 10.132.0.6 has been marked dead because the detector has missed too many heartbeats from it.",
                "ray-project/ray#29461",
            ),
            ("The node with client ID 1eadc9db2f074bfec34caf25dd5bf1f99fad0d59 has been marked dead because the monitor has missed too many heartbeats from it.", "ray-project/ray#3446 (Ray 0.x's text)"),
            (
                "2023-02-24 04:30:19,237 WARNING worker.py:1851 -- Raylet is terminated: ip=192.168.207.5, id=abc3bfd36381a1e890104187b695fe0f938fbfc60e80ac16f9bf12c2. Termination is unexpected. Possible reasons include: (1) SIGKILL by the user or system OOM killer",
                "ray-project/ray#31119",
            ),
            ("Exception: [RayletClient] Raylet connection closed.", "ray-project/ray#4723"),
            ("(pid=81331) E0328 18:23:00.165781 81395 core_worker.cc:382] Raylet failed. Shutting down.", "ray-project/ray#7788"),
            ("2020-01-23 19:31:13,975 ERROR scripts.py:410 -- Ray processes died unexpectedly", "ray-project/ray#6902 (ray start --block under Torque)"),
        ],
        not_examples=[
            # Ray's hint list under the line names heartbeats too, but says nothing happened by itself
            "        (2) raylet has lagging heartbeats due to slow network or busy workload.",
            # a raylet that is starting: healthy
            "2023-02-24 04:10:02,112 INFO worker.py:1538 -- Connected to Ray cluster. View the dashboard at 127.0.0.1:8265",
        ],
        fields=groups,
    ),
    pattern(
        "ray-worker-died",
        "launcher",
        CAUSE,
        E,
        "a Ray worker or actor died without raising an error",
        r"A worker died or was killed while executing (?:a )?task"
        r"|The actor died unexpectedly before finishing this task"
        # (not an actor whose constructor raised: "died because of an error raised in its creation task" relays that error,
        # whose traceback follows, knowledge/relays.py)
        r"|RayTaskError\(ActorDiedError\)|ActorDiedError: The actor died(?! because of an error raised in its creation task)",
        ("died or was killed", "actor died", "ActorDiedError"),
        why="""A process Ray ran for the job (a task's worker, or an actor such as a training worker or a
        vLLM engine) ended without a Python exception: it was killed (the host's OOM killer when the node's
        RAM ran out, Ray's memory monitor, `ray stop`, the scheduler), it crashed in native code (a
        segfault, a CUDA fault), or its node went away. An actor that runs CUDA code but holds no GPU in
        Ray's count (created without `num_gpus`, or with a fraction of a GPU count Ray sees as 0) gets
        `CUDA_VISIBLE_DEVICES` empty from Ray and dies at its first CUDA call, the GPU not found
        (real-stanford/flingbot#2: `num_gpus=torch.cuda.device_count()/num_processes`). The traceback the
        driver prints is Ray's report of the loss, not the dead process's own error, which is only in that
        worker's log on its node.""",
        fix=f"read the dead worker's own log on its node: {RAY_LOGS}python-core-worker-<worker id>*.log and worker-*.err (raylet.out says why it exited); check that node for the OOM killer: dmesg -T | grep -i -E 'killed process|out of memory', and give it more host memory or fewer workers; where the worker's log says no CUDA GPU was found, give the actor a GPU: ray.remote(num_gpus=1) (or a fraction of ray.cluster_resources()['GPU'] that is above 0)",
        examples=[
            (
                "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. Lease ID: 040000004df23df1",
                "verl-project/verl#4921",
            ),
            ("2020-03-28 18:22:59,901	WARNING worker.py:1072 -- A worker died or was killed while executing task ffffffffffffffffeb124b350200.", "ray-project/ray#7788"),
            ("(BackendExecutor pid=5126, ip=10.128.0.32) 2022-02-15 16:53:52,097	ERROR utils.py:42 -- The actor died unexpectedly before finishing this task.", "ray-project/ray#22349"),
            ("ray.exceptions.RayTaskError(ActorDiedError): ray::ActorModelRayActor.fit() (pid=90836, ip=10.47.0.60, actor_id=12b74b9ff0d6aa40de1a271b03000000", "OpenRLHF/OpenRLHF#862"),
        ],
        not_examples=[
            # a task that raised: its own error is in the same line, wrapped (another verdict)
            "ray.exceptions.RayTaskError(RuntimeError): ray::WorkerDict.actor_rollout_init_model() (pid=1234, ip=10.0.0.1)",
            # an actor that was asked to stop: healthy shutdown
            "(TrainTrainable pid=4411) Actor exited normally: ray.actor.exit_actor() was called",
            # an actor whose constructor raised: a relay, its own error follows (OpenRLHF/OpenRLHF#679's line, without its prefix)
            "ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation task, ray::LLMRayActor.__init__() (pid=427151, ip=10.181.130.26)",
        ],
        after=("ray-node-dead", "host-oom-killer"),  # the node or the OOM killer that took the worker with it
    ),
]
