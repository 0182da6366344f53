"""The DeepL flow against a local server on 127.0.0.1 that answers DeepL's /v2/translate."""

from __future__ import annotations

import csv
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bias_hub.builders.jbbq.templates import read_templates
from bias_hub.builders.jbbq.translate import (
    TranslationError,
    align,
    apply_review,
    pronoun_issues,
    protect,
    restore,
    translate_template_files,
)
from bias_hub.pipelines.cli import main


class FakeDeepL(ThreadingHTTPServer):
    """Answers POST /v2/translate; ``script`` holds status codes to send before succeeding."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[int] = []
        self.fail_from: int | None = None  # every request from this number on gets a 500
        self.requests: list[list[str]] = []  # texts of each request that was answered 200
        self.calls = 0
        self.auth: set[str] = set()
        self.drop_slots = False
        self.raw_script: list[bytes] = []  # bodies sent with status 200 before answering properly
        self.omit_optional = False  # answer with "text" only, as a DeepL-compatible server may
        self.global_retries: set[int] = set()  # deepl.http_client.max_network_retries while serving
        # English -> Japanese phrases put in place of the English ones (longest first) instead of
        # the "訳:" prefix: a stand-in for a real translation, good enough to align slots against.
        self.dictionary: dict[str, str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeDeepL

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        import deepl.http_client

        server = self.server
        server.calls += 1
        server.global_retries.add(deepl.http_client.max_network_retries)
        server.auth.add(self.headers.get("Authorization", ""))
        length = int(self.headers.get("Content-Length", 0))
        payload = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/v2/translate":
            self._reply(404, {"message": "not found"})
            return
        if server.script:
            status = server.script.pop(0)
            self._reply(status, {"message": f"scripted {status}"})
            return
        if server.raw_script:
            data = server.raw_script.pop(0)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if server.fail_from is not None and server.calls >= server.fail_from:
            self._reply(500, {"message": "down"})
            return
        assert payload["tag_handling"] == "xml" and payload["ignore_tags"] == ["ph"]
        texts = payload["text"]
        server.requests.append(texts)
        out = []
        for text in texts:
            translated = "訳:" + text
            if server.dictionary is not None:
                translated = text
                for english in sorted(server.dictionary, key=len, reverse=True):
                    translated = translated.replace(english, server.dictionary[english])
            if server.drop_slots:
                translated = translated.replace("<ph>NAME2</ph>", "")
            if server.omit_optional:
                out.append({"text": translated})
            else:
                out.append(
                    {
                        "detected_source_language": "EN",
                        "text": translated,
                        "billed_characters": len(text),
                    }
                )
        self._reply(200, {"translations": out})


@pytest.fixture
def deepl_server():
    server = FakeDeepL()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


TEMPLATE = {
    "Q_id": "1",
    "Category": "Age",
    "Known_stereotyped_groups": '["old"]',
    "NAME1_info": "old",
    "NAME2_info": "nonOld",
    "Names": "NAME1: [grandfather, retiree]; NAME2: [student]",
    "Lexical_diversity": "WORD1: [park, library]",
    "Ambiguous_Context": "The {{NAME1}} & the {{NAME2}} met at the {{WORD1}}.",
    "Disambiguating_Context": "The {{NAME2}} forgot the time.",
    "Question_negative_stereotype": "Who is forgetful?",
    "Question_non_negative": "Who is punctual?",
    "Answer_negative": "The {{NAME2}}",
    "Answer_non_negative": "The {{NAME1}}",
}


def _templates(path: Path, n: int = 3) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(TEMPLATE))
        writer.writeheader()
        for q in range(1, n + 1):
            writer.writerow(
                {**TEMPLATE, "Q_id": str(q), "Question_non_negative": f"Who is punctual ({q})?"}
            )
    return path


def _run(tmp_path: Path, server: FakeDeepL, **kwargs):
    options = {
        "route": "templates",
        "auth_key": "test-key:fx",
        "server_url": server.url,
        "cache_dir": tmp_path / "cache",
        "batch_size": 4,
        "backoff_seconds": 0.0,
        "progress": False,
    }
    options.update(kwargs)
    return translate_template_files([_templates(tmp_path / "Age.csv")], tmp_path / "out", **options)


def test_protect_and_restore_round_trip() -> None:
    text = "The {{NAME1}} & <the> {{ NAME2 }}"
    assert protect(text) == "The <ph>NAME1</ph> &amp; &lt;the&gt; <ph>NAME2</ph>"
    assert restore(protect("The {{NAME1}} & <the> {{NAME2}}")) == "The {{NAME1}} & <the> {{NAME2}}"


def test_drafts_review_sheet_and_expandable_output(tmp_path: Path, deepl_server: FakeDeepL) -> None:
    summary = _run(tmp_path, deepl_server)
    # distinct texts: 3 fields shared by the templates + 3 different nonneg questions
    # + 2 answers + 3 Names words + 2 Lexical_diversity words = 13
    assert summary["texts"] == 13
    assert summary["requests"] == 4  # batches of 4, 4, 4, 1
    assert deepl_server.auth == {"DeepL-Auth-Key test-key:fx"}
    drafts = read_templates(tmp_path / "out" / "Age.ja.csv")
    assert (
        drafts[0].get("Ambiguous_Context")
        == "訳:The {{NAME1}} & the {{NAME2}} met at the {{WORD1}}."
    )
    assert drafts[0].get("Names") == "NAME1: [訳:grandfather, 訳:retiree]; NAME2: [訳:student]"
    with open(tmp_path / "out" / "review_sheet.csv", encoding="utf-8") as handle:
        sheet = list(csv.DictReader(handle))
    assert len(sheet) == 3 * 8  # 6 text fields + 2 list fields per template
    assert {row["decision"] for row in sheet} == {""}
    assert set(sheet[0]) >= {"source", "draft", "decision", "edited", "reason"}


def test_retries_429_and_500_with_backoff(tmp_path: Path, deepl_server: FakeDeepL) -> None:
    delays: list[float] = []
    deepl_server.script = [429, 500, 503]
    summary = _run(tmp_path, deepl_server, backoff_seconds=0.5, sleep=delays.append)
    assert delays == [0.5, 1.0, 2.0]
    assert summary["requests"] == 4 + 3
    assert sum(len(r) for r in deepl_server.requests) == 13
    # The retries are this client's: the deepl module's own setting stays as it was meanwhile.
    assert deepl_server.global_retries == {5}


def test_a_reply_without_optional_fields_is_accepted(
    tmp_path: Path, deepl_server: FakeDeepL
) -> None:
    deepl_server.omit_optional = True  # no billed_characters, no detected_source_language
    summary = _run(tmp_path, deepl_server)
    assert summary["texts"] == 13 and summary["requests"] == 4
    drafts = read_templates(tmp_path / "out" / "Age.ja.csv")
    assert drafts[0].get("Disambiguating_Context") == "訳:The {{NAME2}} forgot the time."


@pytest.mark.parametrize(
    "reply",
    [
        b"<html>502 Bad Gateway</html>",
        b'{"translations": []}',
        b'{"translations": [{"txt": "x"}]}',
        b"[]",
    ],
)
def test_malformed_replies_are_retried_within_the_budget(
    tmp_path: Path, deepl_server: FakeDeepL, reply, monkeypatch
) -> None:
    delays: list[float] = []
    deepl_server.raw_script = [reply, reply]
    summary = _run(tmp_path, deepl_server, backoff_seconds=0.5, sleep=delays.append)
    assert delays == [0.5, 1.0] and summary["requests"] == 4 + 2 and summary["texts"] == 13

    monkeypatch.setattr(
        "sys.argv", ["bias-hub", "build", "jbbq-translation", "Age.csv", "--out", "out"]
    )
    deepl_server.raw_script = [reply] * 3
    with pytest.raises(TranslationError) as err:
        _run(tmp_path, deepl_server, cache_dir=tmp_path / "fresh-cache", max_retries=2)
    message = str(err.value)
    assert (
        f"{deepl_server.url}/v2/translate still failing after 3 attempt(s): MalformedReply"
        in message
    )
    assert "0 of 13 texts answered" in message
    assert message.endswith(
        "resumes without paying twice: bias-hub build jbbq-translation Age.csv --out out"
    )


def test_gives_up_after_max_retries(tmp_path: Path, deepl_server: FakeDeepL) -> None:
    deepl_server.script = [500, 500, 500]
    with pytest.raises(TranslationError, match="after 3 attempt"):
        _run(tmp_path, deepl_server, max_retries=2)
    assert not (tmp_path / "out" / "review_sheet.csv").exists()


def test_interrupted_run_resumes_from_cache(tmp_path: Path, deepl_server: FakeDeepL) -> None:
    deepl_server.fail_from = 3  # two batches succeed, then the service goes down
    with pytest.raises(TranslationError):
        _run(tmp_path, deepl_server, max_retries=1)
    first = [t for request in deepl_server.requests for t in request]
    assert len(first) == 8
    deepl_server.fail_from = None
    deepl_server.requests.clear()
    summary = _run(tmp_path, deepl_server)
    second = [t for request in deepl_server.requests for t in request]
    assert summary["cache_hits"] == 8 and summary["translated_now"] == 5
    assert not set(first) & set(second)  # nothing paid for twice
    deepl_server.requests.clear()
    assert _run(tmp_path, deepl_server)["requests"] == 0  # a third run is all cache
    assert deepl_server.requests == []


def test_an_unwritable_out_or_cache_fails_before_any_request(
    tmp_path: Path, deepl_server: FakeDeepL
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    templates = _templates(tmp_path / "Age.csv")
    with pytest.raises(ValueError, match=r"--out .*file: is a file"):
        translate_template_files(
            [templates],
            blocker,
            auth_key="k",
            server_url=deepl_server.url,
            cache_dir=tmp_path / "cache",
            progress=False,
        )
    with pytest.raises(
        ValueError, match=r"--cache-dir .*file/cache: the API response cache cannot be written"
    ):
        translate_template_files(
            [templates],
            tmp_path / "out",
            auth_key="k",
            server_url=deepl_server.url,
            cache_dir=blocker / "cache",
            progress=False,
        )
    assert deepl_server.calls == 0


def test_lost_placeholders_are_flagged(tmp_path: Path, deepl_server: FakeDeepL) -> None:
    deepl_server.drop_slots = True
    summary = _run(tmp_path, deepl_server)
    # Ambiguous, Disambiguating and Answer_negative lose {{NAME2}} in each of 3 templates
    assert summary["flagged"] == 9
    with open(tmp_path / "out" / "review_sheet.csv", encoding="utf-8") as handle:
        flagged = [row for row in csv.DictReader(handle) if row["check"]]
    assert {row["field"] for row in flagged} == {
        "Ambiguous_Context",
        "Disambiguating_Context",
        "Answer_negative",
    }


def test_cli_needs_the_key_from_the_environment(
    tmp_path: Path, deepl_server, monkeypatch, capsys
) -> None:
    monkeypatch.delenv("DEEPL_AUTH_KEY", raising=False)
    templates = _templates(tmp_path / "Age.csv")
    args = [
        "build",
        "jbbq-translation",
        str(templates),
        "--out",
        str(tmp_path / "out"),
        "--server-url",
        deepl_server.url,
    ]
    assert main(args) == 2
    assert "DEEPL_AUTH_KEY" in capsys.readouterr().err
    monkeypatch.setenv("DEEPL_AUTH_KEY", "secret-key")
    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path / "cache"))
    assert main([*args, "--backoff", "0"]) == 0
    out = capsys.readouterr().out
    # The 13 texts of the template route, and by default (--route both) the filled example of the
    # templates (the same for all three): its ambiguous and disambiguating contexts and two answers;
    # its questions have no slot and its words are Names words already sent.
    assert json.loads(out)["texts"] == 13 + 4 and "secret-key" not in out
    entries = list((tmp_path / "cache" / "api" / "deepl").rglob("*.json"))
    assert len(entries) == 17  # one entry per text, under $BIAS_HUB_CACHE/api/deepl
    assert not any("secret-key" in p.read_text(encoding="utf-8") for p in entries)


def _sheet(tmp_path: Path) -> tuple[Path, list[dict]]:
    path = tmp_path / "out" / "review_sheet.csv"
    with open(path, encoding="utf-8") as handle:
        return path, list(csv.DictReader(handle))


def _write_sheet(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_apply_review_keeps_edits_and_excludes(tmp_path: Path, deepl_server: FakeDeepL) -> None:
    _run(tmp_path, deepl_server)
    path, rows = _sheet(tmp_path)
    for row in rows:
        row["decision"] = "keep"
        if row["Q_id"] == "2" and row["field"] == "Answer_negative":
            row.update(decision="edit", edited="{{NAME2}}の方", reason="more natural")
        if row["Q_id"] == "3" and row["field"] == "Question_negative_stereotype":
            row.update(decision="exclude", reason="the stereotype does not hold in Japan")
    _write_sheet(path, rows)
    summary = apply_review(path, tmp_path / "final")
    assert summary["templates_kept"] == 2 and summary["templates_excluded"] == 1
    assert summary["fields"] == {"keep": 22, "example": 0, "edit": 1, "exclude": 1, "unreviewed": 0}
    final = read_templates(tmp_path / "final" / "Age.reviewed.csv")
    assert [t.get("Q_id") for t in final] == ["1", "2"]
    assert final[1].get("Answer_negative") == "{{NAME2}}の方"
    assert final[0].get("Answer_negative") == "訳:The {{NAME2}}"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"decision": ""}, "line 2 .*'decision' is empty"),
        ({"decision": "maybe"}, "'decision' is 'maybe'"),
        ({"decision": "edit", "edited": ""}, "needs the new text"),
        ({"decision": "exclude", "reason": ""}, "needs a 'reason'"),
        ({"decision": "edit", "edited": "{{NAME3}}は"}, r"unknown slot\(s\) \['NAME3'\]"),
    ],
)
def test_apply_review_rejects_incomplete_sheets(
    tmp_path: Path, deepl_server: FakeDeepL, change, message
) -> None:
    _run(tmp_path, deepl_server)
    path, rows = _sheet(tmp_path)
    for row in rows:
        row["decision"] = "keep"
    rows[0].update(change)
    _write_sheet(path, rows)
    with pytest.raises(TranslationError, match=message):
        apply_review(path, tmp_path / "final")
    assert not (tmp_path / "final").exists()


def test_cli_apply_review(tmp_path: Path, deepl_server: FakeDeepL, capsys) -> None:
    _run(tmp_path, deepl_server)
    path, _ = _sheet(tmp_path)
    args = [
        "build",
        "jbbq-translation",
        "--apply-review",
        str(path),
        "--out",
        str(tmp_path / "final"),
    ]
    assert main(args) == 2  # nothing reviewed yet
    assert main([*args, "--allow-unreviewed"]) == 0
    assert json.loads(capsys.readouterr().out)["fields"]["unreviewed"] == 24


def test_vocabulary_is_translated_reviewed_and_builds(
    tmp_path: Path, deepl_server: FakeDeepL
) -> None:
    templates = _templates(tmp_path / "Age.csv")
    with open(tmp_path / "vocabulary.csv", "w", encoding="utf-8", newline="") as handle:
        handle.write(
            "Category,Name,Info\nAge,grandmother,old\nAge,retiree,old\nAge,teenager,nonOld\nAge,toddler,nonOld\n"
        )
    # template 3 takes its people from the vocabulary
    with open(templates, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rows[2]["Names"] = ""
    with open(templates, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    summary = translate_template_files(
        [templates, tmp_path / "vocabulary.csv"],
        tmp_path / "out",
        route="templates",
        auth_key="k",
        server_url=deepl_server.url,
        cache_dir=tmp_path / "cache",
        backoff_seconds=0.0,
        progress=False,
    )
    # the 13 texts as above (templates 1 and 2 still list every Names word), plus the
    # 4 vocabulary words less "retiree", which is already one of them
    assert summary["texts"] == 13 + 3
    path, sheet = _sheet(tmp_path)
    vocab = [row for row in sheet if row["file"] == "vocabulary.csv"]
    assert [(row["Q_id"], row["draft"]) for row in vocab][:2] == [
        ("row 1", "訳:grandmother"),
        ("row 2", "訳:retiree"),
    ]
    for row in sheet:
        row["decision"] = "keep"
    next(row for row in sheet if row["source"] == "toddler").update(
        decision="exclude", reason="not an adult"
    )
    _write_sheet(path, sheet)
    result = apply_review(path, tmp_path / "reviewed")
    assert result["vocabulary_words_excluded"] == 1 and result["templates_excluded"] == 0
    reviewed = (tmp_path / "reviewed" / "vocabulary.csv").read_text(encoding="utf-8")
    assert "訳:teenager" in reviewed and "toddler" not in reviewed
    assert (
        main(
            [
                "build",
                "jbbq",
                "--source",
                str(tmp_path / "reviewed"),
                "--out-root",
                str(tmp_path / "ds"),
            ]
        )
        == 0
    )


# ---- the JBBQ authors' route: filled examples translated and aligned back to the slots --------

DICTIONARY = {
    "The ": "その",
    "the ": "その",
    "grandfather": "祖父",
    "retiree": "退職者",
    "student": "学生",
    "park": "公園",
    "library": "図書館",
    " &amp; ": "と",
    " met at ": "が会った場所は",
    "forgot the time": "は時間を忘れた",
    "Who is forgetful?": "忘れっぽいのは誰？",
    "Who is punctual": "時間を守るのは誰",
}


def test_pronoun_rule_of_the_paper() -> None:
    assert pronoun_issues("They left early.", "彼らは早く帰った。") == [
        "pronoun rule: 彼ら -> かれら"
    ]
    assert pronoun_issues("They left early.", "かれらは早く帰った。") == []
    assert pronoun_issues(
        "The couple said their child was ready.", "彼女らは子供の準備ができたと言った。"
    ) == ["pronoun rule: 彼女ら -> かれら"]
    # A singular gendered pronoun for a "they" fixes a gender the template leaves open.
    assert pronoun_issues(
        "The {{NAME1}} said they were late.", "{{NAME1}}は、彼女が遅れたと言った。"
    ) == ["pronoun rule: they/their translated as 彼女 -> かれら"]
    # ... unless the English has its own she or he.
    assert pronoun_issues("She said they were late.", "彼女は、かれらが遅れたと言った。") == []
    assert pronoun_issues("He left.", "彼は帰った。") == []


def test_align_puts_the_slots_back_longest_word_first() -> None:
    assert align("若い男性と男性が来た。", {"NAME1": "若い男性", "NAME2": "男性"}) == (
        "{{NAME1}}と{{NAME2}}が来た。",
        [],
    )
    draft, problems = align("祖父と生徒が来た。", {"NAME1": "祖父", "NAME2": "学生"})
    assert draft == "{{NAME1}}と生徒が来た。"
    assert problems == ["{{NAME2}} ('学生') not found in the translation; place it by hand"]


def test_example_route_drafts_beside_template_drafts(
    tmp_path: Path, deepl_server: FakeDeepL
) -> None:
    deepl_server.dictionary = DICTIONARY
    summary = _run(tmp_path, deepl_server, route="both")
    assert (
        summary["examples"] == 3
        and summary["example_flagged"] == 0
        and summary["pronoun_flagged"] == 0
    )
    _, sheet = _sheet(tmp_path)
    ambiguous = next(
        row for row in sheet if row["Q_id"] == "1" and row["field"] == "Ambiguous_Context"
    )
    # The first pairing of the template's people (grandfather, student) and its first WORD1 (park).
    assert ambiguous["example_source"] == "The grandfather & the student met at the park."
    assert ambiguous["example_translation"] == "その祖父とその学生が会った場所はその公園."
    assert ambiguous["example_draft"] == "その{{NAME1}}とその{{NAME2}}が会った場所はその{{WORD1}}."
    assert (
        ambiguous["draft"] == "その{{NAME1}}とその{{NAME2}}が会った場所はその{{WORD1}}."
    )  # the template route
    assert ambiguous["example_check"] == "" and ambiguous["check"] == ""
    question = next(
        row
        for row in sheet
        if row["Q_id"] == "1" and row["field"] == "Question_negative_stereotype"
    )
    assert (
        question["example_source"] == "Who is forgetful?"
        and question["example_draft"] == "忘れっぽいのは誰？"
    )
    # The reviewer takes the aligned example where it reads better.
    path, rows = _sheet(tmp_path)
    for row in rows:
        row["decision"] = "keep"
    rows[1].update(decision="example", example_draft="その{{NAME2}}は時間を忘れてしまった。")
    _write_sheet(path, rows)
    result = apply_review(path, tmp_path / "final")
    assert result["fields"]["example"] == 1
    assert read_templates(tmp_path / "final" / "Age.reviewed.csv")[0].get(
        "Disambiguating_Context"
    ) == ("その{{NAME2}}は時間を忘れてしまった。")


def test_example_route_flags_lost_slots_and_the_pronoun_rule(
    tmp_path: Path, deepl_server: FakeDeepL
) -> None:
    # "the student" reads その生徒 in a sentence but 学生 alone: that slot cannot be placed.
    deepl_server.dictionary = {**DICTIONARY, "the student": "その生徒", "they": "彼ら"}
    templates = _templates(tmp_path / "Age.csv", n=1)
    with open(templates, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rows[0]["Disambiguating_Context"] = "The {{NAME2}} forgot the time; they were late."
    with open(templates, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    summary = translate_template_files(
        [templates],
        tmp_path / "out",
        route="examples",
        auth_key="k",
        server_url=deepl_server.url,
        cache_dir=tmp_path / "cache",
        backoff_seconds=0.0,
        progress=False,
    )
    assert summary["example_flagged"] == 1 and summary["pronoun_flagged"] == 1
    _, sheet = _sheet(tmp_path)
    by_field = {row["field"]: row for row in sheet}
    assert by_field["Ambiguous_Context"]["example_check"] == (
        "{{NAME2}} ('学生') not found in the translation; place it by hand"
    )
    assert (
        by_field["Disambiguating_Context"]["example_draft"]
        == "その{{NAME2}} は時間を忘れた; 彼ら were late."
    )
    assert by_field["Disambiguating_Context"]["example_check"] == "pronoun rule: 彼ら -> かれら"
    assert (
        by_field["Disambiguating_Context"]["draft"] == ""
    )  # no template-level draft on this route
    # The draft CSV takes the aligned examples.
    assert read_templates(tmp_path / "out" / "Age.ja.csv")[0].get("Disambiguating_Context") == (
        "その{{NAME2}} は時間を忘れた; 彼ら were late."
    )
    # Keeping a template-level draft that this route did not make is refused.
    path, rows = _sheet(tmp_path)
    for row in rows:
        row["decision"] = "keep"
    _write_sheet(path, rows)
    with pytest.raises(TranslationError, match="decision 'keep' but 'draft' is empty"):
        apply_review(path, tmp_path / "final")
