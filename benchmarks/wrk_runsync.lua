-- wrk script: POST one small echo job per request and count the jobs that come back
-- COMPLETED (a 200 that is anything else, or any other status, counts as "other").
--
--   wrk -t1 -c8 -d10s -s wrk_runsync.lua http://127.0.0.1:PORT/v2/echo/runsync -- API_KEY
--
-- The key is optional (the SDK's test server and the bare echo need none); a webhook URL
-- after it makes every job name that webhook (benchmarks/webhook_throughput.py). done()
-- prints one "RESULT ..." line that the benchmarks parse.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  completed = 0
  other = 0
  wrk.method = "POST"
  local webhook = args[2]
  if webhook ~= nil and webhook ~= "" then
    wrk.body = '{"input":{"prompt":"hello","n":1},"webhook":"' .. webhook .. '"}'
  else
    wrk.body = '{"input":{"prompt":"hello","n":1}}'
  end
  wrk.headers["Content-Type"] = "application/json"
  local key = args[1]
  if key ~= nil and key ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. key
  end
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
