"""A scripted provider: answers the way a capable model would, derived from each prompt.

A test double for the provider interface (the real providers are exercised
against llama.cpp in tests/test_llm_live.py): it lets the LLM brain's accept
path, evidence linking, caching and replay be tested quickly and exactly.
"""

from __future__ import annotations

import json
import re


class ScriptedProvider:
    name = "local"

    def __init__(self, realizer_ok: bool = True, planner_ok: bool = True):
        self.calls = 0
        self.realizer_ok, self.planner_ok = realizer_ok, planner_ok

    def complete(self, messages, params, schema, timeout=None):
        self.calls += 1
        prompt = messages[0]["content"]
        title = (schema or {}).get("title")
        content = {
            "Dialogue": self.dialogue,
            "ChapterPlan": self.plan,
            "Reworded": self.reword,
            "Opinion": self.opinion,
            "GroundChoice": self.ground,
            "Revisions": lambda p: {"actions": []},
            "Label": lambda p: {"label": "CORRECT"},
            "Written": self.written,
        }[title](prompt)
        return {
            "content": json.dumps(content, ensure_ascii=False),
            "prompt_tokens": len(prompt) // 4,
            "completion_tokens": 40,
            "model": "scripted",
        }

    def dialogue(self, prompt: str) -> dict:
        zh = "写一段" in prompt
        if not self.realizer_ok:
            return {"exchanges": [{"user": "hi", "assistant": "ok"}] * 3}
        date = re.search(r"(?:on |时间是)(.+?)(?:\(|。|\n)", prompt).group(1).strip()
        details = re.search(r"(?:Details|细节)[:：](.+)", prompt)
        pairs = dict(re.findall(r"(\w+) = ([^;；]+)", details.group(1))) if details else {}
        from keme.brains.llm import DETAIL_KEYS

        named = [v.strip() for k, v in pairs.items() if k in DETAIL_KEYS]
        thing = (named or list(pairs.values()) or ["this" if not zh else "这件事"])[0].strip()
        facts = _listed(prompt, r"(?:for the first time|第一次告诉助手)")
        known = _listed(prompt, r"(?:was told these facts before|之前已经知道)")
        update = re.findall(r'(\S+?)\s?(?:is now|现在是)\s*"(.+?)"', prompt)
        if zh:
            exchanges = [
                {
                    "user": f"{date}这天想跟你聊聊{thing}的事情，帮我理一理吧。",
                    "assistant": f"好的，关于{thing}你具体想怎么安排？我来帮你整理一下。",
                }
            ]
            exchanges += [
                {
                    "user": f"顺便说一下，我的{label}是{value}，你记住哈。",
                    "assistant": f"记住了，你的{label}是{value}，以后我会考虑进去。",
                }
                for label, value in facts
            ]
            exchanges += [
                {
                    "user": f"我的{label}还是{value}，这个没变，照旧安排就行。",
                    "assistant": f"明白，按{value}来安排。",
                }
                for label, value in known
            ]
            if update:
                exchanges.append(
                    {
                        "user": "跟你说个大消息："
                        + "，".join(f"{label}现在是{value}" for label, value in update)
                        + "。",
                        "assistant": "恭喜恭喜！这个变化挺大的，我帮你把相关的提醒都更新一下。",
                    }
                )
            exchanges.append(
                {"user": "好啦，今天就先这样，谢谢你。", "assistant": "不客气，有事随时找我，祝你一切顺利。"}
            )
        else:
            exchanges = [
                {
                    "user": f"On {date} I want to sort out {thing} with you properly.",
                    "assistant": f"Happy to help with {thing}. What would you like to do first?",
                }
            ]
            exchanges += [
                {
                    "user": f"By the way, my {label} is {value}, keep that in mind.",
                    "assistant": f"Noted: your {label} is {value}. I will factor that in.",
                }
                for label, value in facts
            ]
            exchanges += [
                {
                    "user": f"Same as always, my {label} is still {value}, so plan around that.",
                    "assistant": f"Right, with {value} in mind that works.",
                }
                for label, value in known
            ]
            if update:
                exchanges.append(
                    {
                        "user": "Big news: "
                        + "; ".join(f"my {label} is now {value}" for label, value in update)
                        + ".",
                        "assistant": (
                            "Congratulations, that is a real change. I will update your reminders to match."
                        ),
                    }
                )
            exchanges.append(
                {
                    "user": "That is all for now, thanks a lot.",
                    "assistant": "You are welcome, talk to you soon and good luck.",
                }
            )
        while len(exchanges) < 3:
            exchanges.insert(
                -1,
                {
                    "user": "Anything else I should know before I go?"
                    if not zh
                    else "还有什么要注意的吗？我一会儿就出门了。",
                    "assistant": "Just keep your phone charged and you will be fine."
                    if not zh
                    else "记得带好充电宝，其他都没问题。",
                },
            )
        return {"exchanges": exchanges[:6]}

    def plan(self, prompt: str) -> dict:
        if not self.planner_ok:
            return {"episodes": [{"kind": "nonsense", "title": "x", "start_day": 99, "days": 1}]}
        zh = "规划" in prompt
        days = int(re.search(r"(\d+) ?(?:days|天)", prompt).group(1))
        count = int(re.search(r"(?:Plan|规划) ?(\d+)", prompt).group(1))
        changes_block = re.search(
            r"(?:MUST happen this month|本月必须发生的生活变化).*?\n((?:- .+\n)+)", prompt
        )
        changes = re.findall(r"^- (\w+)", changes_block.group(1), re.M) if changes_block else []
        kinds_block = re.search(r"(?:Allowed kinds|可用的 kind).*?\n((?:- .+\n)+)", prompt)
        kinds = [k for k in re.findall(r"^- (\w+)", kinds_block.group(1), re.M) if k not in ("trip",)]
        chosen = changes + [kinds[i % len(kinds)] for i in range(max(0, count - len(changes)))]
        step = max(1, days // max(1, len(chosen)))
        return {
            "episodes": [
                {
                    "kind": kind,
                    "title": (f"计划中的事件{i + 1}" if zh else f"Planned {kind.replace('_', ' ')} {i + 1}"),
                    "start_day": 1 + (i * step) % max(1, days - 3),
                    "days": 3,
                }
                for i, kind in enumerate(chosen)
            ]
        }

    def written(self, prompt: str) -> dict:
        """A hard-negative chat on the question's topic that answers nothing: its key words, no values."""
        question = re.search(r"(?:Question|问题)[:：] ?[\"“](.+?)[\"”]\n", prompt).group(1)
        if "写一段" in prompt:
            topic = max(re.findall(r"[\u4e00-\u9fff]+", question), key=len)
            return {
                "exchanges": [
                    {
                        "user_message": f"朋友一直在问我{topic}这种事一般是怎么处理的。",
                        "assistant_reply": "这个因人而异，没有固定的做法。",
                    },
                    {
                        "user_message": "那我就让他自己去查查看吧。",
                        "assistant_reply": "好的，有需要再来问我就行。",
                    },
                ]
            }
        words = " ".join(w.lower() for w in re.findall(r"[A-Za-z]{5,}", question)[:4])
        return {
            "exchanges": [
                {
                    "user_message": f"my friend keeps asking about {words} and how that usually works",
                    "assistant_reply": "that depends a lot on the person, there is no single rule for it",
                },
                {
                    "user_message": "okay then I will let them look it up themselves",
                    "assistant_reply": "sounds good, ask me again whenever you like",
                },
            ]
        }

    def reword(self, prompt: str) -> dict:
        return {"question": re.search(r"(?:Question|问题)[:：] ?(.+)", prompt).group(1).strip()}

    def opinion(self, prompt: str) -> dict:
        return {"supported": True, "reason": "the messages state it"}

    def ground(self, prompt: str) -> dict:
        return {"event_id": re.search(r"^- ([\w-]+)[:：]", prompt, re.M).group(1)}


def _listed(prompt: str, heading: str) -> list[tuple[str, str]]:
    """The `- label: "value"` lines under the prompt's paragraph whose first line matches `heading`."""
    block = re.search(heading + r".*\n((?:- .+\n)+)", prompt)
    return re.findall(r'^- (.+?)[:：]"?\s*"(.+?)"', block.group(1), re.M) if block else []


# ---------------------------------------------------------------- a misbehaving OpenAI-compatible endpoint
import threading  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402

MODES = ("ok", "401", "403", "404", "500-echo", "429-once", "hang", "garbage", "fail-second", "too-long")


def _content(body: dict) -> str:
    """What a capable model would say: the scripted provider's reply for the request's schema, else a short
    answer."""
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")
    if not schema or not schema.get("title"):
        return "I do not know."
    return ScriptedProvider().complete(body["messages"], {}, schema)["content"]


class Endpoint:
    """The OpenAI chat API on 127.0.0.1, in a thread of this process, failing the way `mode` says.

    ok: answers; 401/403/404: that status; 500-echo: a 500 whose body echoes the request headers
    (Authorization included); 429-once: one 429, then answers; hang: accepts and never answers;
    garbage: a 200 whose body is not JSON; fail-second: 500-echo for the second distinct request body
    (and its retries), answers otherwise; too-long: a 400 saying the prompt exceeds the context window.
    """

    def __init__(self, mode: str = "ok"):
        assert mode in MODES, mode
        self.mode = mode
        self.requests = 0
        self.bodies: list[str] = []
        self.release = threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                self._send(200, {"object": "list", "data": [{"id": "probe-model", "object": "model"}]})

            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                status, reply = endpoint.respond(raw, dict(self.headers))
                if status is None:
                    endpoint.release.wait(60)  # accept, then never answer
                    return
                self._send(status, reply)

            def _send(self, status: int, reply):
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def respond(self, raw: str, headers: dict) -> tuple[int | None, object]:
        self.requests += 1
        if raw not in self.bodies:
            self.bodies.append(raw)
        mode = self.mode
        if mode == "fail-second":
            mode = "500-echo" if self.bodies.index(raw) == 1 else "ok"
        if mode in ("401", "403", "404"):
            return int(mode), {"error": {"message": f"status {mode}", "type": "probe"}}
        if mode == "500-echo":
            return 500, {
                "error": {"message": f"upstream failed for request with headers {headers}", "type": "probe"}
            }
        if mode == "429-once" and self.requests == 1:
            return 429, {"error": {"message": "slow down", "type": "rate_limit"}}
        if mode == "hang":
            return None, None
        if mode == "garbage":
            return 200, b"{garbage, not json"
        if mode == "too-long":
            return 400, {
                "error": {"message": "Requested tokens (5000) exceed context window of 4096", "type": "probe"}
            }
        body = json.loads(raw)
        return 200, {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": _content(body)},
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }

    def __enter__(self) -> "Endpoint":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------- a stand-in for llama.cpp's server
FAKE_LLAMA_SERVER = r"""
import json, os, signal, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
port, behaviour = int(sys.argv[1]), sys.argv[2]
if behaviour == "exit-at-start":
    print("error: cannot load the model file", flush=True)
    sys.exit(3)
if behaviour == "never-ready":
    time.sleep(60)
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.reply({"object": "list", "data": [{"id": "m"}]})
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if behaviour == "sigill-on-request":
            print("about to decode a batch", flush=True)
            os.kill(os.getpid(), signal.SIGILL)
        content = json.dumps({"echo": body.get("repeat_penalty"), "seed": body.get("seed"),
                              "format": body.get("response_format", {}).get("type")})
        self.reply({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}})
    def reply(self, data):
        data = json.dumps(data).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def log_message(self, *args):
        print("request", args[1] if len(args) > 1 else "", flush=True)
print("fake llama server ready", flush=True)
HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def fake_llama_command(behaviour: str = "ok"):
    """A LocalServer command for a stand-in server that answers, dies with SIGILL, or fails at start."""
    import sys

    return lambda port: [sys.executable, "-c", FAKE_LLAMA_SERVER, str(port), behaviour]
