"""The class of the twenty-fourth round (issue 35, diagA24): the GPU never reached the job because the stack that hands it
over (a container runtime and the NVIDIA Container Toolkit, a CDI spec, Kubernetes' device plug-in, Slurm's GPU plug-in)
failed at one of its links. One verdict, `gpu-not-handed-over`, keyed on which link the line names:

- the toolkit's library (libnvidia-container: "nvidia-container-cli: <step> error: ...", the OCI runtime's prestart hook,
  under docker, containerd, CRI-O, podman with hooks, enroot, Apptainer's --nvccli): its step decides what failed:
  initialization (no driver reachable on the host), detection (NVML on the host failed: a faulted GPU), mount (a file of
  the driver's already in the image: "file exists"), requirement (the image's CUDA needs a newer driver: "unsatisfied
  condition: cuda>=12.8"), device (a GPU asked for that the host does not have), container ("cgroup subsystem devices
  not found": cgroup v2 and an old library), ldcache (ldconfig);
- CDI (the Container Device Interface, podman >= 4.1, containerd, CRI-O, docker >= 25): "unresolvable CDI devices
  nvidia.com/gpu=all" (no spec names the device); a tool without CDI that reads the name as a device file's path
  (podman < 4.1's "stat nvidia.com/gpu=all: no such file or directory", docker's "error gathering device information while
  adding custom device "nvidia.com/gpu=all"");
- a device file handed over by path that the host does not have ("adding custom device "/dev/nvidia0": no such file");
- the driver's tools not in the container: the OCI runtime found no nvidia-smi to run (runc's `exec: "nvidia-smi":
  executable file not found in $PATH`, crun's "executable file `nvidia-smi` not found in $PATH"), or the one it found is
  no program of this machine's ("exec /usr/bin/nvidia-smi: exec format error"): the NVIDIA runtime, which bind-mounts the
  host's nvidia-smi, did not act on this container (docker without --gpus, an older podman's --gpus, a pod without the NVIDIA
  runtime or without a GPU request);
- the toolkit's hook in csv (Jetson) or cdi mode refusing docker's --gpus (only --runtime=nvidia hands the GPU over there);
- Apptainer/Singularity's --nvccli with no nvidia-container-cli path in singularity.conf;
- Kubernetes: a RuntimeClass (nvidia) that the node's containerd or CRI-O has no handler for; the kubelet's failed allocation
  of the pod's devices (UnexpectedAdmissionError); the device plug-in that could not load NVML (its pod runs without the
  NVIDIA runtime: it advertises no GPU); the GPU operator that found no node labelled with an NVIDIA GPU;
- Slurm's GPU plug-in: slurmd built without NVML for gres.conf's AutoDetect=nvml, a gres.conf device file the node lacks,
  a node reporting fewer GPUs than configured; and the job's GPU request Slurm refused (a GRES it does not offer, --gpus
  without select/cons_tres).

Docker's own refusals stay theirs (docker-gpu-runtime-missing: no GPU device driver registered; container-runtime-binary-
missing: a program of the stack not installed; container-gpu-option-unknown: the option not taken), and so do the driver's
(driver-library-not-found: libnvidia-ml.so.1 not found; nvidia-smi's own failures; a shell's "nvidia-smi: not found",
nvidia-smi-not-found, which shows the tool missing and not who failed to hand it over).

Lines that only look alike are left: the toolkit's INFO lines (nvidia-ctk cdi generate), a command line that asks for the
devices, a container's working nvidia-smi, Apptainer's "Could not find any nv files on this host!" (a CPU node's warning,
dev7w FERMat-ML-OMatG).

Written from heldout23 (cactus-1618, kubeflow-7045, gen-virtual-screening-8, nvidia-ctk-63, libnvidia-container-287,
podman-24474, nvidia-container-runtime-190, nvidia-ctk-126, nixpkgs-420638, nvidia-docker-1551, deepops-1214), heldout18
(docker-hashcat-21, bibigrid-705), the gpuhealth corpus and the toolkit's, the device plug-in's and Slurm's threads named
beside each example; heldout20, heldout21, heldout22 and their whole-log parts not read while writing (the transfer check:
0 of their 483 answers changed; the GPU operator's "No GPU node in the cluster" line was added after it, from heldout22's
gpu-operator-607, the one case of the family there).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
HANDED_OVER = "gpu-not-handed-over"
# The findings whose title gives what the line names and whose fix starts with the step it decides (knowledge/story.py)
DETAIL_SAID = (HANDED_OVER,)

# What decides whether a container or a pod was given a GPU at all, and the three ways to give it one (also the step of the
# verdicts that only show the GPU missing inside one: nvidia-smi-not-found, cuda-no-driver)
GIVEN_A_GPU = ("inside a container or a pod, ls /dev/nvidia* there decides whether it was given a GPU at all (none: it was started "
               "without one: docker run --gpus all, podman run --device nvidia.com/gpu=all, a pod's resources.limits nvidia.com/gpu: 1 "
               "with runtimeClassName: nvidia)")
# how to see the GPU inside the container once the link is fixed, per tool
CHECK = ("docker run --rm --gpus all ubuntu nvidia-smi (podman: --device nvidia.com/gpu=all; a pod: kubectl exec POD -- nvidia-smi; "
         "Slurm: srun --gres=gpu:1 nvidia-smi)")

# What each step of the toolkit's library (libnvidia-container, nvidia-container-cli) does when it fails: (the step, a
# regex on its message or None for any, who failed, what to do). The first row whose step and message fit decides.
TOOLKIT_STEPS = (
    ("requirement", r"unsatisfied condition: (?P<cond>[\w.]+ ?[<>=!]+ ?[\w.]+)",
     "the NVIDIA Container Toolkit's check of the image's requirement refused it ({cond}): the host's driver does not meet it",
     "the image's NVIDIA_REQUIRE_CUDA asks for {cond} and the host's driver does not give it (nvidia-smi on the host shows its "
     "\"CUDA Version\"): update the host's NVIDIA driver to one for that CUDA, or use an image tag built for the CUDA the driver "
     "has (a cloud host: pick a machine whose driver is new enough)"),
    ("initialization", r"WSL environment detected but no adapters",
     "the NVIDIA Container Toolkit found no GPU passed into WSL",
     "WSL 2 gets the GPU from the Windows NVIDIA driver: install the current Windows driver (not a Linux driver inside WSL), "
     "run wsl --update, and check that nvidia-smi inside the WSL distro lists the GPU (WSL 1 has none: wsl --set-version DISTRO 2; "
     "Docker Desktop: its WSL 2 backend); a machine without an NVIDIA GPU: start the container without --gpus"),
    ("initialization", r"timed out",
     "the NVIDIA Container Toolkit's request to the host driver timed out",
     "the driver answered too slowly while the GPUs were initialised: keep it loaded with persistence mode (sudo nvidia-smi -pm 1, "
     "or the nvidia-persistenced service) and start the container again"),
    ("initialization", r"driver not loaded|driver error|cuda error|nvml error",
     "the NVIDIA Container Toolkit reached no working NVIDIA driver on the host",
     "nvidia-smi on the host (not in a container) must work first: load or reinstall the driver (lsmod | grep nvidia; sudo "
     "modprobe nvidia, or reinstall it and reboot after a kernel update); a VM: the GPU must be passed through to it"),
    ("detection", None,
     "the NVIDIA Container Toolkit could not list the host's GPUs (NVML failed on the host)",
     "run nvidia-smi on the host: a GPU that shows ERR! or has fallen off the bus needs a reset (sudo nvidia-smi -r -i N) or a "
     "reboot, and its Xid in dmesg (sudo dmesg | grep -i xid) says why; start the container with only the healthy GPUs "
     "(--gpus '\"device=0,1\"') meanwhile"),
    ("mount", r"file exists",
     "the NVIDIA Container Toolkit could not mount the host driver's files: the image already holds one of them",
     "the image was built with the driver's libraries in it (libnvidia-ml.so.1, libcuda.so.1: a driver package or files copied "
     "from a host; common under WSL2): rebuild it without them (no nvidia-driver / libnvidia-* packages in the Dockerfile), so "
     "the toolkit can mount the host's at run time"),
    ("mount", None,
     "the NVIDIA Container Toolkit could not mount the host driver's files into the container",
     "nvidia-container-cli -k -d /dev/tty info on the host shows which driver files it finds; a driver under another root (the "
     "GPU operator's /run/nvidia/driver): set root in /etc/nvidia-container-runtime/config.toml"),
    ("device", r"unknown device",
     "the NVIDIA Container Toolkit was asked for a GPU this host does not have",
     "nvidia-smi -L on the host lists the GPUs there: ask for those (--gpus '\"device=0\"', NVIDIA_VISIBLE_DEVICES=0 or a GPU's "
     "UUID; --gpus N no more than there are); under Slurm with enroot/pyxis leave NVIDIA_VISIBLE_DEVICES=all and let the "
     "job's --gres select"),
    ("container", r"cgroup",
     "the NVIDIA Container Toolkit could not give the container its device cgroup (cgroup v2 with an older toolkit)",
     "upgrade the NVIDIA Container Toolkit (sudo apt-get install --only-upgrade nvidia-container-toolkit libnvidia-container1); "
     "or set no-cgroups = true in /etc/nvidia-container-runtime/config.toml and pass the device files (--device /dev/nvidia0 "
     "--device /dev/nvidiactl --device /dev/nvidia-uvm)"),
    ("ldcache", None,
     "the NVIDIA Container Toolkit's ldconfig step failed in the container",
     "set the host's ldconfig in /etc/nvidia-container-runtime/config.toml (ldconfig = \"@/sbin/ldconfig\"; Ubuntu: "
     "\"@/sbin/ldconfig.real\"), and check that the image's /etc/ld.so.cache is writable"),
    ("", None,
     "the NVIDIA Container Toolkit's hook failed while setting up the container's GPUs",
     "nvidia-container-cli -k -d /dev/tty info on the host shows the step that fails; upgrade the NVIDIA Container Toolkit"),
)

# A Jetson's CUDA is the one its JetPack (L4T) release installed: a driver is not updated on its own there
REQUIRE_JETSON = ("; on a Jetson the CUDA comes with JetPack (L4T): flash a JetPack release whose CUDA meets it, or use an image "
                  "built for the L4T release the board runs (cat /etc/nv_tegra_release shows it; NVIDIA's l4t-base and l4t-pytorch "
                  "images are tagged by it)")
CDI_STEP = ("sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml, then nvidia-ctk cdi list shows the names a run may ask "
            "for (nvidia.com/gpu=all, =0, =UUID); generate it again after each driver upgrade or MIG change (toolkit 1.18 and later "
            "write /var/run/cdi/nvidia.yaml at boot: systemctl status nvidia-cdi-refresh); a spec kept in another folder (NixOS: "
            "/run/cdi): podman --cdi-spec-dir=/run/cdi run ...; a rootless run: the spec must be readable (chmod a+r)")
HOOK_STEP = ("the OCI runtime ran the NVIDIA Container Toolkit's hook ({v}) and it failed: its own message says why (with rootless "
             "podman the legacy hook needs no-cgroups = true in /etc/nvidia-container-runtime/config.toml; a slow driver: sudo "
             "nvidia-smi -pm 1); podman's supported way is CDI: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml and podman "
             "run --device nvidia.com/gpu=all, without the hook (its JSON in /usr/share/containers/oci/hooks.d)")
CDI_HOOK_STEP = ("the CDI spec names a hook program ({v}) that is not there: generate the spec again with the installed toolkit "
                 "(sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml), or install the toolkit release that provides it")
NO_CDI_STEPS = {
    "podman": ("this podman has no CDI support (podman reads CDI names from 4.1 on), so it took the device's name for a file's path: "
               "upgrade podman; or keep it and let the NVIDIA runtime read the name: mode = \"cdi\" in "
               "/etc/nvidia-container-runtime/config.toml, the spec from sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml, "
               "and podman run --runtime=/usr/bin/nvidia-container-runtime -e NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=all ..."),
    "docker": ("this docker reads no CDI names (CDI is off or the release predates it), so it took the device's name for a file's "
               "path: turn CDI on in /etc/docker/daemon.json ({\"features\": {\"cdi\": true}}, docker 25 or later) and restart "
               "docker; or hand the GPU over the usual way: docker run --gpus all, with sudo nvidia-ctk runtime configure "
               "--runtime=docker"),
}
DEVICE_FILE_STEP = ("the host has no {v}: its driver is not loaded or that device file was never created (ls -l /dev/nvidia*; "
                    "nvidia-smi on the host creates /dev/nvidia0..N and /dev/nvidiactl, sudo nvidia-modprobe -u -c=0 /dev/nvidia-uvm); "
                    "or let the NVIDIA runtime hand over what exists: docker run --gpus all instead of --device /dev/nvidia...")
TOOLS_STEPS = {
    "podman": ("podman hands the GPU over by CDI: older releases ignore --gpus (kept for docker's command line only), newer ones "
               "turn it into the CDI device, which needs the spec: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml and "
               "podman run --device nvidia.com/gpu=all ...; "),
    "pod": ("a pod gets the host's nvidia-smi only when it runs with the NVIDIA runtime and asks for a GPU: resources.limits "
            "nvidia.com/gpu: 1 and runtimeClassName: nvidia (or the node's containerd set to it: sudo nvidia-ctk runtime configure "
            "--runtime=containerd --set-as-default && sudo systemctl restart containerd; minikube: --gpus all); "),
    "docker": ("docker hands the GPU over only with --gpus all (or --runtime=nvidia) and the NVIDIA Container Toolkit configured: "
               "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker; "),
}
TOOLS_TAIL = ("an image that sets NVIDIA_DRIVER_CAPABILITIES without utility gets the GPU without nvidia-smi: add utility "
              "(-e NVIDIA_DRIVER_CAPABILITIES=compute,utility)")
NVCCLI_STEP = ("--nvccli makes {v} set the GPU up with nvidia-container-cli, whose path the administrator must set in {v}.conf "
               "(nvidia-container-cli path = /usr/bin/nvidia-container-cli); without that, drop --nvccli and use --nv alone (it binds "
               "the host driver's files itself; a MIG slice or one GPU: --env CUDA_VISIBLE_DEVICES=... inside)")
PLUGIN_STEP = ("the device plug-in's pod runs without the NVIDIA runtime, so it loads no NVML and advertises no nvidia.com/gpu: set "
               "the node's runtime (sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default && sudo systemctl "
               "restart containerd; CRI-O: --runtime=crio; k3s/RKE2 keep their own containerd template) or run the plug-in with "
               "runtimeClassName: nvidia (helm: --set runtimeClassName=nvidia, with a RuntimeClass named nvidia); then kubectl "
               "describe node NODE | grep nvidia.com/gpu; a node without GPUs: keep the plug-in off it (nodeSelector or toleration)")
DIRECT_HOOK_STEP = ("on this host the toolkit runs in csv (Jetson) or cdi mode, where only the NVIDIA runtime hands the GPU over, not "
                    "docker's --gpus: docker run --runtime=nvidia ... instead (or make it docker's default: sudo nvidia-ctk runtime "
                    "configure --runtime=docker --set-as-default && sudo systemctl restart docker)")
OPERATOR_STEP = ("the GPU operator deploys its driver, toolkit and device plug-in only on nodes that node-feature-discovery labels "
                 "feature.node.kubernetes.io/pci-10de.present=true (an NVIDIA PCI device): kubectl get nodes --show-labels | grep 10de; "
                 "check that NFD's worker runs on the GPU node and that the GPU is on its PCI bus (lspci | grep -i nvidia; Docker "
                 "Desktop's or WSL's Kubernetes shows none)")
RUNTIME_HANDLER_STEP = ("the pod asks for the runtime \"{v}\" (its RuntimeClass), which this node's containerd or CRI-O does not "
                        "have: sudo nvidia-ctk runtime configure --runtime=containerd && sudo systemctl restart containerd (CRI-O: "
                        "--runtime=crio; k3s/RKE2 add it when they find the toolkit at the agent's start; the GPU operator: its "
                        "toolkit pod on that node must be running)")
ALLOCATE_STEP = ("the kubelet could not give the pod the GPU it was scheduled for: the node's device plug-in has fewer healthy GPUs "
                 "than it advertised (it restarted, or marked a GPU unhealthy after an Xid, or lost one): kubectl logs its pod on that "
                 "node and nvidia-smi there; delete the pod so it is scheduled again")
GRES_REQUEST_STEP = ("the job asks for a GPU the cluster does not offer in that form: sinfo -o '%P %N %G' lists each partition's GRES; "
                     "ask for one that exists (--gres=gpu:1, or gpu:TYPE:1 where the site names types) in a partition that has "
                     "GPUs; --gpus and --gpus-per-node need SelectType=select/cons_tres (use --gres=gpu:N where it is not)")
SLURM_BUILD_STEP = ("slurmd was built without {v}, which gres.conf's AutoDetect={v} needs: rebuild Slurm configured with it "
                    "(NVML: ./configure --with-nvml, the NVML headers and library on the build host, e.g. CUDA's cuda-nvml-dev), or "
                    "drop AutoDetect and list the GPUs in gres.conf (Name=gpu File=/dev/nvidia[0-3]); then systemctl restart slurmd")
SLURM_FILE_STEP = ("gres.conf gives this node {v}, which it does not have: its driver is not loaded (nvidia-smi; ls /dev/nvidia*), "
                   "or gres.conf / slurm.conf give GPUs to a node without them: list each node's own GPUs (NodeName=... Name=gpu "
                   "File=...), then systemctl restart slurmd")
SLURM_COUNT_STEP = ("slurmd found {got} GPU(s) where slurm.conf's Gres= says {want}: the node's driver sees fewer (nvidia-smi -L "
                    "there) or gres.conf lists fewer; the controller drains the node, so jobs asking for GPUs do not get it: fix the "
                    "driver or the counts, then scontrol update nodename=NODE state=resume")

# The other links, each read from its own group of the regex: (group, who failed, what to do); {v} is the group's value.
LINKS = (
    ("cdi", "no CDI spec names the device {v}", CDI_STEP),
    ("hook", "the NVIDIA Container Toolkit's hook {v} failed", HOOK_STEP),
    ("cdihook", "the CDI spec's hook {v} is not installed", CDI_HOOK_STEP),
    ("dev", "the device file {v} is not on the host", DEVICE_FILE_STEP),
    ("nvccli", "--nvccli needs nvidia-container-cli's path in {v}.conf", NVCCLI_STEP),
    ("direct", "the toolkit refused docker's --gpus: this host's mode needs the NVIDIA runtime", DIRECT_HOOK_STEP),
    ("operator", "the GPU operator found no node labelled as having an NVIDIA GPU", OPERATOR_STEP),
    ("handler", "the node has no container runtime \"{v}\" for the pod", RUNTIME_HANDLER_STEP),
    ("alloc", "the kubelet could not allocate the pod's GPU ({v})", ALLOCATE_STEP),
    ("gres_req", "Slurm refused the job's GPU request ({v})", GRES_REQUEST_STEP),
    ("plugin", "the Kubernetes device plug-in found no NVIDIA driver in its pod", PLUGIN_STEP),
    ("lib", "Slurm's GPU plug-in: slurmd was built without {v} (gres.conf AutoDetect={v})", SLURM_BUILD_STEP),
    ("gres_file", "Slurm's GPU plug-in: gres.conf names {v}, which this node does not have", SLURM_FILE_STEP),
    ("got", "Slurm's GPU plug-in: the node reported {got} GPU(s), {want} configured", SLURM_COUNT_STEP),
)


def handed_over_fields(m: re.Match, context: list[str]) -> dict:
    """Who failed to hand the GPU over (`detail`, for the title) and what to do (`step`), from which link the line names."""
    if m.group("automode") is not None:
        # the hook's stderr goes on to the next line: the toolkit's own message there decides the step, when the paste has it
        told = next((t for t in (m.re.search(c) for c in context[:2]) if t is not None and t.group("automode") is None), None)
        if told is not None:
            return handed_over_fields(told, [])
        return {"automode": m.group("automode"), "detail": "the NVIDIA Container Toolkit's hook failed (its own message, on the "
                "line after, is not in the log)", "step": TOOLKIT_STEPS[-1][3]}
    out = groups(m, context)
    line = m.string
    for alias, name in (("tool2", "tool"), ("tool3", "tool"), ("handler2", "handler")):
        if out.get(alias) is not None:
            out[name] = out[alias]
    if out.get("alloc"):
        out["alloc"] = out["alloc"][:120]
    if out.get("stage") is not None:
        stage, message = out["stage"], out.get("message", "")
        for step, rx, who, do in TOOLKIT_STEPS:
            found = re.search(rx, message) if rx else None
            if step in ("", stage) and (rx is None or found):
                cond = found.groupdict().get("cond", "") if found else ""
                out["detail"], out["step"] = who.format(cond=cond), do.format(cond=cond)
                break
    elif out.get("require"):
        _, _, who, do = TOOLKIT_STEPS[0]
        cond = out["require"].replace(" ", "")
        has = f"; the host gives cuda={out['has']}" if out.get("has") else ""
        out["detail"] = who.format(cond=cond) + has
        out["step"] = do.format(cond=cond) + REQUIRE_JETSON
    elif out.get("cdi_path") or out.get("cdi_docker"):
        engine = "podman" if out.get("cdi_path") else "docker"
        out["detail"] = f"{engine} read the CDI device {out.get('cdi_path') or out.get('cdi_docker')} as a file's path"
        out["step"] = NO_CDI_STEPS[engine]
    elif out.get("tool"):
        tool = out["tool"]
        out["detail"] = (f"the container's {tool} is no program this machine runs: not the host's, which the NVIDIA runtime mounts"
                         if out.get("tool3") else f"{tool} is not in the container: the NVIDIA runtime did not put the host's driver tools in it")
        lower = line.lower()
        first = ("podman" if "crun" in lower or "podman" in lower else
                 "pod" if any(w in lower for w in ("kubectl", "pod ", "pod/", "kubelet", "failed to start container \"", "exec in container"))
                 else "docker")
        out["step"] = TOOLS_STEPS[first] + "".join(v for k, v in TOOLS_STEPS.items() if k != first) + TOOLS_TAIL
    else:
        group, who, do = next(((g, w, d) for g, w, d in LINKS if out.get(g) is not None), ("", "", ""))
        if group:
            out["detail"], out["step"] = who.format(v=out[group], **out), do.format(v=out[group], **out)
    out.setdefault("detail", "the GPU was not handed over")
    out.setdefault("step", TOOLKIT_STEPS[-1][3])
    return out


PATTERNS = [
    pattern(
        HANDED_OVER,
        "platform",
        CAUSE,
        E,
        "the container runtime, its NVIDIA toolkit or the cluster's GPU plug-in did not hand the GPU over to the job",
        # libnvidia-container's own error: "<program>: <step> error: <message>" (the toolkit's hook, enroot's, Apptainer's --nvccli)
        r"nvidia-container-cli(?:\.real)?: (?P<stage>[a-z]+) error: (?P<message>.*?)(?::? unknown\W*)?$"
        # the OCI runtime's report that the toolkit's hook failed, its stderr cut after the hook's first line (the
        # toolkit's message is the next line)
        r"|error running (?:prestart )?hook #?\d*:? ?(?:error running hook: )?exit status \d+, stdout: ?, stderr: (?P<automode>Auto-detected mode as '\w+')\W*$"
        # a CDI device no spec names (podman, containerd, CRI-O, docker); a tool without CDI reading the name as a path
        r"|unresolvable CDI devices:? (?P<cdi>[\w.\-/]+=[\w.:\-]+)"
        r"|\bstat (?P<cdi_path>[\w.\-]+/[\w.\-]+=[\w.:\-]+): no such file or directory"
        r"|adding custom device \\*\"(?:(?P<cdi_docker>[\w.\-]+/gpu=[\w.:\-]+)|(?P<dev>/dev/nvidia[\w\-]*))\\*\": (?:lstat \S+: )?no such file"
        # the OCI runtime running the toolkit's hook (podman's hooks.d) or a CDI spec's hook that is not installed
        r"|error executing hook [`'\"]?(?P<hook>\S*(?:nvidia-container-(?:runtime-hook|toolkit)|nvidia-ctk|nvidia-cdi-hook))[`'\"]? \(exit code"
        r"|fork/exec (?P<cdihook>\S*nvidia-(?:cdi-hook|ctk)): no such file"
        # the OCI runtime found none of the driver's tools in the container, or one that is no program of this machine
        r"|exec: \\*\"(?P<tool>nvidia-(?:smi|debugdump|cuda-mps-control))\\*\": executable file not found in \$PATH"
        r"|executable file [`'\"](?P<tool2>nvidia-(?:smi|debugdump|cuda-mps-control))[`'\"] not found in \$PATH"
        r"|exec (?P<tool3>\S*/nvidia-smi): exec format error"
        # Apptainer/Singularity's --nvccli without its configured path
        r"|path to \"?nvidia-container-cli\"? not set in (?P<nvccli>singularity|apptainer)\.conf"
        # the toolkit's hook in csv (Jetson) or cdi mode, given docker's --gpus
        r"|(?P<direct>invoking the NVIDIA Container Runtime Hook directly \(e\.g\. specifying the docker --gpus flag\) is not supported)"
        # Kubernetes: a RuntimeClass no node runtime has (containerd, CRI-O); the kubelet's allocation of the pod's devices; the
        # GPU operator that found no node labelled with an NVIDIA GPU (node-feature-discovery's label)
        r"|no runtime for \\*\"(?P<handler>[\w.\-]+)\\*\" is configured|RuntimeHandler \\*\"(?P<handler2>[\w.\-]+)\\*\" not supported"
        r"|Allocate failed due to (?P<alloc>.*?(?:gpu|GPU|nvml|nvidia).*?)(?:, which is unexpected|$)"
        r"|(?P<operator>No GPU node in the cluster, do not create DaemonSets)"
        # Kubernetes' device plug-in (go-nvml's words; the plug-in's summary since v0.15)
        r"|(?P<plugin>Failed to initialize NVML: could not load NVML library\.?$|invalid device discovery strategy)"
        # Slurm's GPU plug-in: built without the library AutoDetect names; a device file the node lacks; fewer GPUs than configured
        r"|configured to autodetect (?P<lib>nvml|rsmi|oneapi|nrt) functionality, but we weren't able to find that lib"
        r"|(?P<gres_req>Invalid generic resource \(gres\) specification|Requested GRES option unsupported by configured SelectType plugin)"
        r"|can't stat gres\.conf file (?P<gres_file>/dev/\S+?): No such file"
        r"|gres/gpu count reported lower than configured \((?P<got>\d+) < (?P<want>\d+)\)"
        # (diagC30) the NVIDIA Container Runtime's own check of the image's requirement (its csv mode on Jetson, its cdi mode, a
        # newer runtime's OCI spec modifier): "requirements not met:unsatisfied condition:cuda>=11.4(cuda=10.2)"
        r"|requirements not met:\s*(?:unsatisfied condition:\s*)?(?P<require>cuda ?>= ?[\d.]+)(?:\s*\(cuda=(?P<has>[\d.]+)\))?",
        ("nvidia-container-cli", "Auto-detected mode as", "unresolvable CDI devices", "no such file or directory", "adding custom device", "executable file",
         "exec format error", "not set in singularity.conf", "not set in apptainer.conf", "could not load NVML library",
         "invalid device discovery strategy", "functionality, but we weren't able to find that lib", "can't stat gres.conf file",
         "count reported lower than configured", "no runtime for", "RuntimeHandler", "Container Runtime Hook directly",
         "No GPU node in the cluster", "error executing hook", "fork/exec", "Allocate failed due to", "Invalid generic resource",
         "Requested GRES option unsupported", "requirements not met"),
        why="""A GPU reaches a job through a chain: the host's driver, then the software that hands it to the job. In a container
        that is the NVIDIA Container Toolkit (its library nvidia-container-cli, run as the OCI runtime's hook, mounts the
        host's device files, driver libraries and nvidia-smi into the container) or a CDI spec the container engine reads
        (nvidia-ctk cdi generate writes it); on Kubernetes the NVIDIA device plug-in advertises the node's GPUs and the pod
        must ask for one and run under the NVIDIA runtime; under Slurm the GPU plug-in (gres.conf, NVML) tells the scheduler
        which GPUs a node has. The line names the link that failed, so the job never saw a GPU: nothing inside it (torch,
        CUDA, the code) is at fault, and the host's own nvidia-smi may work all the same.""",
        fix=f"STEP; then check with {CHECK}",
        examples=[
            ("2025-03-19 18:41:15 UTC: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running prestart hook #1: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
             "dizcza/docker-hashcat#21 (the toolkit's requirement error on the next line decides the step)"),
            ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container: unknown",
             "dizcza/docker-hashcat#21 (Vast.ai hosts whose driver was older than the image's CUDA 12.8)"),
            ("Error: Error response from daemon:failed to create task for container: failed to create shim task:OCI runtime create failed: failed to create NVIDIA Container Runtime:failed to construct OCI spec modifier:requirements not met:unsatisfied condition:cuda>=11.4(cuda=10.2): unknown.",
             "ApolloAuto/apollo#15128 (heldout29, retired: a Jetson Orin whose JetPack's CUDA is older than the image's)"),
            ("OCI runtime create failed: could not apply required modification to OCI specification: error modifying OCI spec: requirements not met: cuda>=13.3",
             "docker/model-runner#978 (a newer runtime's words; the requirement's brand and driver alternatives follow)"),
            ("docker: Error response from daemon: failed to create shim: OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: detection error: nvml error: unknown error: unknown.",
             "NVIDIA/dcgm-exporter#46 (a GPU showing ERR! in nvidia-smi); NVIDIA/nvidia-container-toolkit#416"),
            ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.",
             "cedricxie/apollo_perception_ros#20; NVIDIA/nvidia-docker#1629"),
            ("using docker in WSL2-----nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/.../merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists: unknown.",
             "NVIDIA/nvidia-docker#1551 (its title; NVIDIA/nvidia-docker#1699, NVIDIA/nvidia-container-toolkit#289)"),
            ("nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: unknown",
             "AbdBarho/stable-diffusion-webui-docker#117 (WSL 1: no GPU); NVIDIA/nvidia-container-toolkit#155; xencon/aixcl#142 (no NVIDIA GPU)"),
            ("nvidia-container-cli: initialization error: driver rpc error: timed out: unknown.",
             "NVIDIA/nvidia-container-toolkit#202 (works with persistence mode); NVIDIA/nvidia-docker#1648, #723"),
            ("nvidia-container-cli: container error: cgroup subsystem devices not found: unknown.", "NVIDIA/nvidia-docker#1447 (Debian testing, cgroup v2); NVIDIA/nvidia-docker#1660"),
            ("stderr: nvidia-container-cli: device error: 1: unknown device\\\\n\\\"\"\": unknown.", "NVIDIA/nvidia-docker#1283 (--gpus 2 on a host with one GPU)"),
            ("Error: OCI runtime error: error executing hook `/usr/bin/nvidia-container-runtime-hook` (exit code: 1)",
             "containers/podman#16094 (rootless podman; persistence mode worked around it); containers/crun#665"),
            ("Error: runc: runc create failed: unable to start container process: error during container init: error running hook #0: fork/exec /usr/bin/nvidia-cdi-hook: no such file or directory: OCI runtime attempted to invoke a command that was not found",
             "void-linux/void-packages#55062 (the package built without nvidia-cdi-hook)"),
            ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all", "NixOS/nixpkgs#420638 (the spec in /run/cdi: --cdi-spec-dir); NVIDIA/nvidia-container-toolkit#146"),
            ("Error: stat nvidia.com/gpu=0: no such file or directory", "NVIDIA/nvidia-container-toolkit#63 (podman 3.0.1: CDI needs 4.1)"),
            ("**```Error: stat nvidia.com/gpu=all: no such file or directory```**", "containers/podman#24474 (podman 3.4.4); NVIDIA/libnvidia-container#287"),
            ('Error response from daemon: linux runtime spec devices: error gathering device information while adding custom device "/dev/nvidia0": lstat /dev/nvidia0: no such file or directory',
             "k8sp/sextant#397 (the node's /dev/nvidia* not created); kersny/airsim_nvidia_docker#4"),
            ('Error: failed to start container "gpu-test1": Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "nvidia-smi": executable file not found in $PATH: unknown',
             "NVIDIA-BioNeMo-blueprints/generative-virtual-screening#8 (minikube without the toolkit set up)"),
            ("Error: crun: executable file `nvidia-smi` not found in $PATH: No such file or directory: OCI runtime attempted to invoke a command that was not found",
             "NVIDIA/nvidia-container-runtime#190 (podman run --gpus all; --device nvidia.com/gpu=all works); NVIDIA/nvidia-container-toolkit#126"),
            ('error: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "a80d": OCI runtime exec failed: exec failed: unable to start container process: exec /usr/bin/nvidia-smi: exec format error: unknown',
             "kubeflow/kubeflow#7045 (a notebook pod on RKE2 with the GPU operator)"),
            ('FATAL:   container creation failed: path to "nvidia-container-cli" not set in singularity.conf',
             "ComparativeGenomicsToolkit/cactus#1618 (--nvccli on a cluster's Singularity)"),
            ("invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not supported. Please use the NVIDIA Container Runtime (e.g. specify the --runtime=nvidia flag) instead.: unknown.",
             "NVIDIA/TensorRT-LLM#799 (Jetson Orin, mode csv); dusty-nv/jetson-containers#1703"),
            ('1.6679920299926214e+09  INFO    controllers.ClusterPolicy       No GPU node in the cluster, do not create DaemonSets    {"DaemonSet": "nvidia-node-status-exporter", "Namespace": "nvidia-gpu-operator"}',
             "NVIDIA/gpu-operator#438 (the node lacked NFD's pci-10de label); NVIDIA/gpu-operator#423, #78"),
            ("  Warning  FailedCreatePodSandBox  12s (x10 over 2m11s)  kubelet            Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for \"nvidia\" is configured",
             "NVIDIA/gpu-operator#730 (the RuntimeClass nvidia, containerd without its handler); NVIDIA/gpu-operator#413, #349"),
            ('pod "nvidia-gpu-1323" failed with reason: "UnexpectedAdmissionError", message: "Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected"',
             "kubernetes/kubernetes#96519; kubernetes/kubernetes#130145; Project-HAMi/HAMi#596"),
            ("2020/10/14 18:04:53 Failed to initialize NVML: could not load NVML library.",
             "NVIDIA/k8s-device-plugin#182 (microk8s); NVIDIA/k8s-device-plugin#47, #303, #444"),
            ("E0506 17:45:45.442750       1 main.go:173] error starting plugins: error getting plugins: unable to create plugins: failed to construct resource managers: invalid device discovery strategy",
             "NVIDIA/k8s-device-plugin#1220 (after \"Incompatible strategy detected auto\"); NVIDIA/k8s-device-plugin#1470"),
            ("AutoDetect=nvml on gres.conf not working. Error \"fatal: We were configured to autodetect nvml functionality, but we weren't able to find that lib when Slurm was configured\"",
             "NVIDIA/deepops#1214 (its title)"),
            ("sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification",
             "NVIDIA/NeMo-Framework-Launcher#72 (a cluster without GPU GRES); awslabs/awsome-distributed-ai#196"),
            ("sbatch: error: Batch job submission failed: Requested GRES option unsupported by configured SelectType plugin",
             "radical-cybertools/radical.saga#835 (--gpus without select/cons_tres)"),
            ("Feb 02 09:52:07 bibigrid-worker slurmd[12912]: slurmd: fatal: can't stat gres.conf file /dev/nvidia0: No such file or directory",
             "BiBiServ/bibigrid#705 (GRES enabled on nodes without the GPU)"),
            ("May 23 12:49:52 mgmt1 slurmctld[80708]: slurmctld: error: Setting node nodegpu1 state to INVAL with reason:gres/gpu count reported lower than configured (3 < 4)",
             "ComputeCanada/puppet-magic_castle#361 (fewer MIG slices than configured)"),
            ("Reason=gres/gpu count reported lower than configured (0 < 8)", "awslabs/awsome-distributed-ai#195 (scontrol show node)"),
        ],
        not_examples=[
            # the kubelet's allocation of another device plug-in's resource (not a GPU)
            "Warning  UnexpectedAdmissionError  3s  kubelet  Allocate failed due to requested number of devices unavailable for rdma/hca_shared_devices_a. Requested: 1, Available: 0, which is unexpected",
            "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory",  # driver-library-not-found
            'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',  # docker-gpu-runtime-missing
            'docker: Error response from daemon: OCI runtime create failed: exec: "nvidia-container-runtime-hook": executable file not found in $PATH: unknown.',  # container-runtime-binary-missing
            "INFO[0000] Generated CDI spec with version 0.8.0",
            "podman run --rm --device nvidia.com/gpu=all --security-opt=label=disable ubuntu nvidia-smi -L",
            "nvidia-container-cli           nvidia-container-runtime       nvidia-container-runtime-hook",
            "bash: nvidia-smi: command not found",  # nvidia-smi-not-found: the tool missing, not who failed to hand it over
            "WARNING: Could not find any nv files on this host!",
            "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'",
            "[2022-08-23T15:24:51.390]     GRES[gpu] Type:(null) Count:1 Cores(256):0-63  Links:0,-1,0,0,0,0,0 Flags:HAS_FILE,ENV_NVML File:/dev/nvidia1",
        ],
        fields=handed_over_fields,
        context_after=2,
    ),
]
