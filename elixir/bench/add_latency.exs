# The 1K-element Nx.add of resident tensors, through Nxvk.Backend and as
# one compiled request (Nxvk.Compiler), under the port's knobs, in one VM:
# each variant gets a port of its own (a device number mapped to device 0,
# started with the variant's environment), with early replies on or off.
# Per variant: the medians (and 90th percentiles) of both paths, the
# engine's split per run (stats' engine_ns: record, submit, wait, release,
# in us), the port's own stages per request, and the CPU serving requests.
#
#   cd elixir && mix run bench/add_latency.exs [--min-time 0.25] [--variants defaults,sync,...]
#
# The VM's own flags (ELIXIR_ERL_OPTIONS="+sbwt very_long +swt very_low")
# apply to the whole run: compare them across runs.  Markdown on stdout.

{opts, _, _} = OptionParser.parse(System.argv(), strict: [min_time: :float, variants: :string])
min_time = opts[:min_time] || 0.25

# {name, the port's environment, early replies}
all = [
  {"defaults", [], true},
  {"sync", [], false},
  {"defer_wait", [{"NXVK_PORT_DEFER_WAIT", "1"}], true},
  {"poll_gap_2us", [{"NXVK_WAIT_POLL_GAP_US", "2"}], true},
  {"irq_cpus_kept", [{"NXVK_PORT_IRQ_CPUS", "1"}], true},
  {"no_group_submit", [{"NXVK_GROUP_SUBMIT", "0"}], true},
  {"spin_0", [{"NXVK_WAIT_SPIN_US", "0"}], true},
  {"defaults_again", [], true}
]

variants =
  case opts[:variants] do
    nil -> all
    v -> Enum.filter(all, fn {n, _, _} -> n in String.split(v, ",") end)
  end

defmodule AddLatency do
  def times(fun, min_time) do
    fun.()
    deadline = System.monotonic_time(:microsecond) + round(min_time * 1.0e6)
    loop(fun, deadline, [], 0)
  end

  defp loop(_fun, _deadline, acc, n) when n >= 20_000, do: acc

  defp loop(fun, deadline, acc, n) do
    {t, _} = :timer.tc(fun)
    acc = [t | acc]

    if n >= 20 and System.monotonic_time(:microsecond) > deadline,
      do: acc,
      else: loop(fun, deadline, acc, n + 1)
  end

  def pct(l, p) do
    s = Enum.sort(l)
    Enum.at(s, min(length(s) - 1, div(length(s) * p, 100)))
  end

  def f1(x), do: :io_lib.format("~.1f", [x / 1]) |> to_string()
end

{:ok, info} = Nxvk.Server.info()

IO.puts(
  "device: #{info["device"]["name"]}, #{DateTime.utc_now() |> DateTime.truncate(:second)}, VM flags: #{System.get_env("ELIXIR_ERL_OPTIONS") || "-"}, schedulers #{System.schedulers_online()}\n"
)

IO.puts(
  "| variant | backend median | p90 | compiled median | p90 | engine per run: record / submit / wait / release (us) | port besides engine per request | cpu | irq cpus left |"
)

IO.puts("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")

early0 = :persistent_term.get({Nxvk.Graph, :early}, nil)

variants
|> Enum.with_index(20)
|> Enum.each(fn {{name, env, early}, dev} ->
  Application.put_env(:nxvk, :device_map, %{dev => 0})
  Application.put_env(:nxvk, :device_env, %{dev => env})
  :persistent_term.put({Nxvk.Graph, :early}, early)
  server = Nxvk.Backend.server(dev)
  a = Nx.iota({1024}, type: :f32, backend: {Nxvk.Backend, device: dev})
  b = Nx.iota({1024}, type: :f32, backend: {Nxvk.Backend, device: dev})
  jit = Nx.Defn.jit(&Nx.add/2, compiler: Nxvk.Compiler, device: dev)
  # warm: the pipelines, the prepared graphs
  for _ <- 1..50, do: {Nx.add(a, b), jit.(a, b)}
  {:ok, s0} = Nxvk.Server.stats(server)
  tb = AddLatency.times(fn -> Nx.add(a, b) end, min_time)
  tc = AddLatency.times(fn -> jit.(a, b) end, min_time)
  {:ok, s1} = Nxvk.Server.stats(server)
  e0 = s0["engine_ns"]
  e1 = s1["engine_ns"]
  runs = max(e1["recordings"] - e0["recordings"], 1)
  per = fn k -> AddLatency.f1((e1[k] - e0[k]) / runs / 1000) end
  reqs = max(s1["requests"] - s0["requests"], 1)
  stage = fn k -> s1["time_ns"][k] - s0["time_ns"][k] end

  besides =
    (stage.("read") + stage.("decode") + stage.("command") + stage.("reply") - stage.("engine")) /
      reqs / 1000

  IO.puts(
    "| #{name}#{if env != [], do: " (" <> Enum.map_join(env, " ", fn {k, v} -> "#{k}=#{v}" end) <> ")", else: ""}#{if early, do: "", else: " (replies after the run)"} | " <>
      "#{AddLatency.pct(tb, 50)} us | #{AddLatency.pct(tb, 90)} | #{AddLatency.pct(tc, 50)} us | #{AddLatency.pct(tc, 90)} | " <>
      "#{per.("record")} / #{per.("submit")} / #{per.("wait")} / #{per.("release")} | #{AddLatency.f1(besides)} | #{s1["cpu"]} | #{s1["irq_cpus_left"]} |"
  )

  Nx.backend_deallocate(a)
  Nx.backend_deallocate(b)
  :ok = Supervisor.terminate_child(Nxvk.Supervisor, :"Elixir.Nxvk.Server.#{dev}")
  Supervisor.delete_child(Nxvk.Supervisor, :"Elixir.Nxvk.Server.#{dev}")
end)

if early0 == nil,
  do: :persistent_term.erase({Nxvk.Graph, :early}),
  else: :persistent_term.put({Nxvk.Graph, :early}, early0)
