-- wrk script: POST one small echo job with a webhook per request to /runsync, and count
-- the jobs that come back COMPLETED (anything else counts as "other").
--
--   wrk -t1 -c8 -d5s -s wrk_runsync_webhook.lua http://127.0.0.1:PORT/v2/echo/runsync -- KEY URL
--
-- done() prints one "RESULT ..." line that benchmarks/webhook_throughput.py parses.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  completed = 0
  other = 0
  wrk.method = "POST"
  wrk.body = '{"input":{"prompt":"hello","n":1},"webhook":"' .. args[2] .. '"}'
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. args[1]
end

function response(status, headers, body)
  if status == 200 and string.find(body, '"status":"COMPLETED"', 1, true) then
    completed = completed + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local c, o = 0, 0
  for _, thread in ipairs(threads) do
    c = c + thread:get("completed")
    o = o + thread:get("other")
  end
  io.write(string.format(
    "RESULT completed=%d other=%d requests=%d duration_us=%d socket_errors=%d p50_us=%d p99_us=%d\n",
    c, o, summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
