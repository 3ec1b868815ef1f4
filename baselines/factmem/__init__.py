"""factmem: resident facts, on-demand skills and one hash-chained write log (after the seed design
"事实常驻、技能按需、一条写入链" in /work/shared/seeds/fact-skill-writechain-design-zh.txt)."""
