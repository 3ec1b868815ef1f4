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

    def complete(self, messages, params, schema):
        self.calls += 1
        prompt = messages[0]["content"]
        title = (schema or {}).get("title")
        content = {
            "Dialogue": self.dialogue, "ChapterPlan": self.plan, "Reworded": self.reword, "Opinion": self.opinion,
            "GroundChoice": self.ground, "Revisions": lambda p: {"actions": []}, "Label": lambda p: {"label": "CORRECT"},
        }[title](prompt)
        return {"content": json.dumps(content, ensure_ascii=False), "prompt_tokens": len(prompt) // 4,
                "completion_tokens": 40, "model": "scripted"}

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
        facts = re.findall(r'^- (.+?)[:：]"?\s*"(.+?)"', prompt, re.M)
        update = re.findall(r'(\S+?)\s?(?:is now|现在是)\s*"(.+?)"', prompt)
        if zh:
            exchanges = [{"user": f"{date}这天想跟你聊聊{thing}的事情，帮我理一理吧。", "assistant": f"好的，关于{thing}你具体想怎么安排？我来帮你整理一下。"}]
            exchanges += [{"user": f"顺便说一下，我的{label}是{value}，你记住哈。", "assistant": f"记住了，你的{label}是{value}，以后我会考虑进去。"} for label, value in facts]
            if update:
                exchanges.append({"user": "跟你说个大消息：" + "，".join(f"{label}现在是{value}" for label, value in update) + "。",
                                  "assistant": "恭喜恭喜！这个变化挺大的，我帮你把相关的提醒都更新一下。"})
            exchanges.append({"user": "好啦，今天就先这样，谢谢你。", "assistant": "不客气，有事随时找我，祝你一切顺利。"})
        else:
            exchanges = [{"user": f"On {date} I want to sort out {thing} with you properly.", "assistant": f"Happy to help with {thing}. What would you like to do first?"}]
            exchanges += [{"user": f"By the way, my {label} is {value}, keep that in mind.", "assistant": f"Noted: your {label} is {value}. I will factor that in."} for label, value in facts]
            if update:
                exchanges.append({"user": "Big news: " + "; ".join(f"my {label} is now {value}" for label, value in update) + ".",
                                  "assistant": "Congratulations, that is a real change. I will update your reminders to match."})
            exchanges.append({"user": "That is all for now, thanks a lot.", "assistant": "You are welcome, talk to you soon and good luck."})
        while len(exchanges) < 3:
            exchanges.insert(-1, {"user": "Anything else I should know before I go?" if not zh else "还有什么要注意的吗？我一会儿就出门了。",
                                  "assistant": "Just keep your phone charged and you will be fine." if not zh else "记得带好充电宝，其他都没问题。"})
        return {"exchanges": exchanges[:6]}

    def plan(self, prompt: str) -> dict:
        if not self.planner_ok:
            return {"episodes": [{"kind": "nonsense", "title": "x", "start_day": 99, "days": 1}]}
        zh = "规划" in prompt
        days = int(re.search(r"(\d+) ?(?:days|天)", prompt).group(1))
        count = int(re.search(r"(?:Plan|规划) ?(\d+)", prompt).group(1))
        changes_block = re.search(r"(?:MUST happen this month|本月必须发生的生活变化).*?\n((?:- .+\n)+)", prompt)
        changes = re.findall(r"^- (\w+)", changes_block.group(1), re.M) if changes_block else []
        kinds_block = re.search(r"(?:Allowed kinds|可用的 kind).*?\n((?:- .+\n)+)", prompt)
        kinds = [k for k in re.findall(r"^- (\w+)", kinds_block.group(1), re.M) if k not in ("trip",)]
        chosen = changes + [kinds[i % len(kinds)] for i in range(max(0, count - len(changes)))]
        step = max(1, days // max(1, len(chosen)))
        return {"episodes": [
            {"kind": kind, "title": (f"计划中的事件{i + 1}" if zh else f"Planned {kind.replace('_', ' ')} {i + 1}"),
             "start_day": 1 + (i * step) % max(1, days - 3), "days": 3}
            for i, kind in enumerate(chosen)]}

    def reword(self, prompt: str) -> dict:
        return {"question": re.search(r"(?:Question|问题)[:：] ?(.+)", prompt).group(1).strip()}

    def opinion(self, prompt: str) -> dict:
        return {"supported": True, "reason": "the messages state it"}

    def ground(self, prompt: str) -> dict:
        return {"event_id": re.search(r"^- ([\w-]+)[:：]", prompt, re.M).group(1)}
