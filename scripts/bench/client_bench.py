#!/usr/bin/python3
"""Python asyncio + aiohttp client for npcorch's client benchmark.

Sends the same streaming chat requests as npcorch's Go client (one prompt and
N images as file:// URLs or base64 data URLs of the files' own bytes), as a
careful Python harness would: one aiohttp session, a semaphore bounding the
requests in flight, the body serialised once per request with json.dumps,
the SSE stream read line by line and each data line parsed with json.loads.

Usage: client_bench.py SPEC.json   (written by scripts/bench/clientbench)
Prints one JSON object: CPU seconds of the sending loop (user + system,
resource.getrusage), wall seconds, peak RSS, body size, errors.
Needs Debian's python3-aiohttp.
"""

import asyncio
import base64
import json
import resource
import sys
import time

import aiohttp


def image_url(path, media):
    if media == "file":
        return "file://" + path
    with open(path, "rb") as f:
        return "data:image/png;base64," + base64.b64encode(f.read()).decode("ascii")


def build_body(spec, media):
    parts = [{"type": "text", "text": spec["prompt"]}]
    for path in spec["images"]:
        parts.append({"type": "image_url", "image_url": {"url": image_url(path, media)}})
    return json.dumps({
        "model": spec["model"],
        "messages": [{"role": "user", "content": parts}],
        "max_tokens": spec["max_tokens"],
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }).encode()


async def one(session, url, spec, media):
    body = build_body(spec, media)
    content = []
    finished = False
    async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
        if resp.status != 200:
            await resp.read()
            return None, len(body)
        async for raw in resp.content:
            line = raw.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                break
            chunk = json.loads(data)
            if "error" in chunk:
                return None, len(body)
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    content.append(delta["content"])
                if choice.get("finish_reason"):
                    finished = True
    return ("".join(content) if finished else None), len(body)


async def main(spec):
    media = spec["media"]
    url = spec["base"] + "/v1/chat/completions"
    sem = asyncio.Semaphore(spec["concurrency"])
    timeout = aiohttp.ClientTimeout(total=600)
    connector = aiohttp.TCPConnector(limit=spec["concurrency"])
    results = {"errors": 0, "wrong": 0, "body": 0}

    async def guarded(session):
        async with sem:
            try:
                answer, size = await one(session, url, spec, media)
            except (aiohttp.ClientError, asyncio.TimeoutError):
                results["errors"] += 1
                return
            results["body"] = size
            if answer is None:
                results["errors"] += 1
            elif answer != spec["expect"]:
                results["wrong"] += 1

    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        ru0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        await asyncio.gather(*(guarded(session) for _ in range(spec["requests"])))
        ru1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return {
        "client": "python",
        "media": media,
        "requests": spec["requests"],
        "errors": results["errors"],
        "wrong_answers": results["wrong"],
        "cpu_s": cpu,
        "wall_s": t1 - t0,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "body_bytes": results["body"],
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: client_bench.py SPEC.json")
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    print(json.dumps(asyncio.run(main(spec))))
