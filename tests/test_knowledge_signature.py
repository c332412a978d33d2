"""An error's signature and the issue search for it (issue 35 item 3)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from gpudoctor.knowledge.signature import search_url, signature


def test_numbers_paths_and_addresses_are_normalised():
    assert signature("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has 3.44 GiB free") == (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <n> MiB. GPU <n> has <n> GiB free"
    )
    assert signature("FileNotFoundError", "[Errno 2] No such file or directory: '/data/train/shard-00017.parquet'") == (
        "FileNotFoundError: [Errno <n>] No such file or directory: '<path>'"
    )
    assert signature("RuntimeError", "connect to 10.0.0.5:29500 failed at 0x7f62eb6ed630") == "RuntimeError: connect to <addr> failed at <addr>"


def test_names_with_digits_stay():
    assert signature("RuntimeError", "no kernel image for sm_80 on cuda:1 (int64)") == "RuntimeError: no kernel image for sm_80 on cuda:<n> (int64)"


def test_two_runs_of_one_error_have_one_signature():
    a = signature("RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
    b = signature("RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, cuda:3 and cpu!")
    assert a == b


def test_the_search_is_the_message_phrase_in_the_projects_issues():
    url = search_url("pytorch/pytorch", "RuntimeError", "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "github.com", "/pytorch/pytorch/issues")
    assert parse_qs(parts.query)["q"] == ['is:issue "Expected all tensors to be on the same device, but found at"']


def test_a_message_without_words_searches_the_exception():
    url = search_url("huggingface/transformers", "StopIteration", "")
    assert parse_qs(urlsplit(url).query)["q"] == ['is:issue "StopIteration"']


def test_with_no_project_the_search_is_every_projects_issues():
    url = search_url("", "RecursionError", "maximum recursion depth exceeded while calling a Python object")
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("github.com", "/search")
    assert parse_qs(parts.query) == {"type": ["issues"], "q": ['"maximum recursion depth exceeded while calling a Python object"']}


def test_a_frame_search_names_the_file_and_the_function_not_the_line():
    from gpudoctor.knowledge.signature import frame_search_url

    url = frame_search_url("deepspeedai/DeepSpeed", "C:\\envs\\ds\\Lib\\site-packages\\deepspeed\\runtime\\zero\\stage3.py", "backward")
    assert parse_qs(urlsplit(url).query)["q"] == ['is:issue "stage3.py" "in backward"']
    assert parse_qs(urlsplit(frame_search_url("x/y", "/a/b.py", "<module>")).query)["q"] == ['is:issue "b.py"']
