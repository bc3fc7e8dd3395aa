-- wrk script: submit echo jobs with POST /run and poll GET /status/{id} until each one is
-- COMPLETED; completed jobs per second is the figure.
--
--   wrk -t1 -c8 -d10s -s wrk_run_status.lua http://127.0.0.1:PORT -- API_KEY /v2/echo
--
-- wrk gives a script no handle on which connection a response came from, so the jobs to
-- poll are one FIFO shared by the thread's connections: wrk handles a response before it
-- asks for that connection's next request, so a submitted job is polled next, a job still
-- IN_QUEUE or IN_PROGRESS goes back on the queue, and a new /run is sent only when no job
-- waits to be polled. Jobs in flight therefore stay near the connection count.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  completed = 0
  other = 0
  submitted = 0
  pending = {}
  head, tail = 1, 0
  local key = args[1] or ""
  base = args[2] or "/v2/echo"
  headers = {}
  if key ~= "" then
    headers["Authorization"] = "Bearer " .. key
  end
  local post_headers = { ["Content-Type"] = "application/json" }
  for name, value in pairs(headers) do
    post_headers[name] = value
  end
  run_request = wrk.format("POST", base .. "/run", post_headers, '{"input":{"prompt":"hello","n":1}}')
end

function request()
  if head <= tail then
    local id = pending[head]
    pending[head] = nil
    head = head + 1
    return wrk.format("GET", base .. "/status/" .. id, headers)
  end
  submitted = submitted + 1
  return run_request
end

function response(status, hdrs, body)
  if status ~= 200 then
    other = other + 1
    return
  end
  local state = string.match(body, '"status":"([A-Z_]+)"')
  if state == "COMPLETED" then
    completed = completed + 1
  elseif state == "IN_QUEUE" or state == "IN_PROGRESS" then
    tail = tail + 1
    pending[tail] = string.match(body, '"id":"([^"]+)"')
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
