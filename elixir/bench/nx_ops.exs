# Nx ops through Nxvk.Backend against Nx.BinaryBackend and against
# `nxvk bench ops` (the engine in-process, no port), f32, 1K..16M elements;
# then the port's share of a 1K op: each path's median and the nxvk
# process's own time per request by stage (stats' time_ns), the rest being
# the pipes, the BEAM and Elixir.  The last two lines sum it up.
#
#   cd elixir && mix run bench/nx_ops.exs [--sizes 1K,64K,1M,16M] [--ops add,exp,sum] [--min-time 1.0]
#
# Times are medians of repeated calls on resident tensors (inputs already
# on the device, the result left there: what a model's inner loop sees),
# wall clock in this process.  Nx.BinaryBackend is timed up to 1M elements.  Markdown on stdout.

{opts, _, _} = OptionParser.parse(System.argv(), strict: [sizes: :string, ops: :string, min_time: :float])

parse_size = fn s ->
  {n, unit} = Integer.parse(s)
  n * %{"" => 1, "K" => 1024, "M" => 1024 * 1024}[unit]
end

sizes = (opts[:sizes] || "1K,16K,256K,1M,4M,16M") |> String.split(",") |> Enum.map(parse_size)
ops = (opts[:ops] || "add,exp,sum") |> String.split(",")
min_time = opts[:min_time] || 1.0

defmodule Bench do
  # median, min, max in microseconds of fun over at least min_time seconds (3..2000 runs)
  def measure(fun, min_time) do
    fun.()
    deadline = System.monotonic_time(:microsecond) + round(min_time * 1.0e6)
    times = loop(fun, deadline, [], 0)
    sorted = Enum.sort(times)
    {Enum.at(sorted, div(length(sorted), 2)), hd(sorted), List.last(sorted), length(sorted)}
  end

  defp loop(_fun, _deadline, acc, n) when n >= 2000, do: acc

  defp loop(fun, deadline, acc, n) do
    {t, _} = :timer.tc(fun)
    acc = [t | acc]
    if n >= 2 and System.monotonic_time(:microsecond) > deadline, do: acc, else: loop(fun, deadline, acc, n + 1)
  end

  def us(x) when x >= 1_000_000, do: :io_lib.format("~.2f s", [x / 1.0e6]) |> to_string()
  def us(x) when x >= 1000, do: :io_lib.format("~.2f ms", [x / 1000]) |> to_string()
  def us(x), do: :io_lib.format("~.1f us", [x / 1]) |> to_string()

  def size(n) when n >= 1024 * 1024, do: "#{div(n, 1024 * 1024)}M"
  def size(n), do: "#{div(n, 1024)}K"

  def op("add", a, b), do: Nx.add(a, b)
  def op("exp", a, _b), do: Nx.exp(a)
  def op("sum", a, _b), do: Nx.sum(a)
  def op("multiply", a, b), do: Nx.multiply(a, b)

  # nxvk bench ops, in-process: the e2e (upload, dispatch, download) and kernel medians
  def engine(ops, sizes) do
    bin = Nxvk.Server.binary_path()
    json = Path.join(System.tmp_dir!(), "nxvk-nx-bench-#{System.unique_integer([:positive])}.json")
    args = ["bench", "ops", "--ops", Enum.join(ops, ","), "--sizes", Enum.map_join(sizes, ",", &Integer.to_string/1), "--json", json]
    {_, 0} = System.cmd(bin, args, stderr_to_stdout: true)
    {:ok, data} = File.read!(json) |> Nxvk.JSON.decode()
    File.rm(json)

    for r <- data["results"], into: %{} do
      {{r["name"], r["size"]}, %{"e2e_us" => r["e2e_ns"]["median"] / 1000, "kernel_us" => r["gpu_ns"]["median"] / 1000}}
    end
  end
end

{:ok, info} = Nxvk.Server.info()
IO.puts("device: #{info["device"]["name"]} (#{info["device"]["driver_name"]} #{info["device"]["driver_version"]}), #{DateTime.utc_now() |> DateTime.truncate(:second)}")
{:ok, st} = Nxvk.Server.stats()
IO.puts("port: vCPUs kept off for the GPU's interrupts: #{st["irq_cpus_left"]}; early replies: #{Nxvk.Graph.early_member() != ""}; prepared graphs: #{Nxvk.Graph.prepare?()}")
IO.puts("command: mix run bench/nx_ops.exs #{Enum.join(System.argv(), " ")}\n")

engine = Bench.engine(ops, sizes)

IO.puts("| op | elements | Nxvk.Backend (median) | Nx.BinaryBackend | BinaryBackend / Nxvk | nxvk bench e2e | nxvk bench kernel |")
IO.puts("| --- | --- | --- | --- | --- | --- | --- |")

for n <- sizes do
  # random inputs in [0.5, 1.5) (never zeros), made once per size
  gen = fn -> for _ <- 1..n, into: <<>>, do: <<:rand.uniform() + 0.5::float-32-little>> end
  a = Nx.from_binary(gen.(), :f32, backend: Nx.BinaryBackend)
  b = Nx.from_binary(gen.(), :f32, backend: Nx.BinaryBackend)
  da = Nx.backend_copy(a, Nxvk.Backend)
  db = Nx.backend_copy(b, Nxvk.Backend)

  for op <- ops do
    {med, _lo, _hi, _runs} = Bench.measure(fn -> Bench.op(op, da, db) end, min_time)

    # Nx.BinaryBackend up to 1M elements (4M add takes seconds a call)
    bb =
      if n <= 1024 * 1024 do
        {m, _, _, _} = Bench.measure(fn -> Bench.op(op, a, b) end, min(min_time, 0.5))
        m
      end

    e = engine[{op, n}]
    e2e = e && e["e2e_us"]
    kern = e && e["kernel_us"]
    fmt = fn nil -> "-"; x -> Bench.us(x) end
    ratio = if bb, do: :io_lib.format("~.1fx", [bb / med]) |> to_string(), else: "-"

    IO.puts("| #{op} | #{Bench.size(n)} | #{Bench.us(med)} | #{fmt.(bb)} | #{ratio} | #{fmt.(e2e)} | #{fmt.(kern)} |")
  end
end

# ------------------------------------------------------ the port's share of a 1K op
a = Nx.iota({1024}, type: :f32, backend: Nxvk.Backend)
b = Nx.iota({1024}, type: :f32, backend: Nxvk.Backend)
server = Nxvk.Backend.server(0)

run_header = %{
  "cmd" => "run",
  "graph" => %{
    "inputs" => {:object, [{"a", %{"handle" => a.data.handle}}, {"b", %{"handle" => b.data.handle}}]},
    "ops" => [%{"op" => "add", "in" => ["a", "b"], "out" => "s"}],
    "outputs" => {:object, [{"s", true}]}
  },
  "keep" => false
}

op_header = %{"cmd" => "op", "op" => "add", "in" => [a.data.handle, b.data.handle], "keep" => false}
ping = %{"cmd" => "ping"}
jit_add = Nx.Defn.jit(&Nx.add/2, compiler: Nxvk.Compiler)

rows = [
  # an exec of a graph prepared on the first call (a run where NXVK_PREPARE=0)
  {"Nx.add through Nxvk.Backend (result kept, freed by GC)", :backend, ["exec", "run"], fn -> Nx.add(a, b) end},
  # an exec of the graph the port prepared (a run where NXVK_PREPARE=0)
  {"Nx.Defn.jit(&Nx.add/2, compiler: Nxvk.Compiler)", :compiled, ["exec", "run"], fn -> jit_add.(a, b) end},
  {"the same run request sent by hand (no Nx, keep: false)", :run, "run", fn -> {:ok, _, _} = Nxvk.Server.request(server, run_header) end},
  {"an op request (keep: false)", :op, "op", fn -> {:ok, _, _} = Nxvk.Server.request(server, op_header) end},
  {"ping (framing, pipe, client; no engine)", :ping, "ping", fn -> {:ok, _, _} = Nxvk.Server.request(server, ping) end}
]

# The port's own time for one request: after each timed call, a stats
# request reads "last_ns" (nxvk-port(7)), the stages of the request before
# it: read, decode (framing, JSON), command (engine included: graph
# parsing, handles, the engine's run), engine, reply (JSON, write).  A
# sample whose last request is not the call's own (a batch of frees from
# collection came between) is dropped.  Medians over the samples; "rest"
# is each sample's wall time less the port's, the pipes, the BEAM and
# Elixir: the medians do not add up exactly.
sample = fn fun, cmd ->
  fun.()
  deadline = System.monotonic_time(:microsecond) + round(min_time * 1.0e6)

  Stream.repeatedly(fn ->
    {wall, _} = :timer.tc(fun)
    {:ok, %{"last_ns" => l}} = Nxvk.Server.stats(server)
    {wall, l}
  end)
  |> Stream.transform(0, fn x, n ->
    if n >= 2000 or (n >= 20 and System.monotonic_time(:microsecond) > deadline), do: {:halt, n}, else: {[x], n + 1}
  end)
  |> Enum.filter(fn {_, l} -> l["cmd"] in List.wrap(cmd) end)
end

median = fn [] -> 0.0; l -> Enum.at(Enum.sort(l), div(length(l), 2)) end
early = Nxvk.Graph.early_member() != ""

IO.puts("\n1K-element f32 add, resident inputs: where the time goes (port: the nxvk process's own time for the request, median µs)#{if early, do: "; early replies on: the engine runs after the reply", else: ""}\n")
IO.puts("| path | median | min | port: read+decode | port: command less engine | port: engine | port: reply | rest: pipes, BEAM, Elixir |")
IO.puts("| --- | --- | --- | --- | --- | --- | --- | --- |")

medians =
  for {name, key, cmd, fun} <- rows, into: %{} do
    {med, lo, _, _} = Bench.measure(fun, min_time)
    samples = sample.(fun, cmd)
    col = fn f -> median.(Enum.map(samples, fn {w, l} -> f.(w, l) end)) end
    # with early replies (NXVK_EARLY_REPLY=1) the engine runs after the
    # reply, overlapping the client's side: it is left out of the port's
    # share of the wall time, and "rest" holds any wait for it
    port_us = fn l -> (l["read"] + l["decode"] + l["command"] + l["reply"] - if(l["early"], do: l["engine"], else: 0)) / 1000 end
    us1 = fn x -> :io_lib.format("~.1f", [x / 1]) |> to_string() end
    rd = col.(fn _, l -> (l["read"] + l["decode"]) / 1000 end)
    cmd_less = col.(fn _, l -> (l["command"] - l["engine"]) / 1000 end)
    eng = col.(fn _, l -> l["engine"] / 1000 end)
    rep = col.(fn _, l -> l["reply"] / 1000 end)
    rest = col.(fn w, l -> w - port_us.(l) end)
    wall = col.(fn w, _ -> w end)
    IO.puts("| #{name} | #{Bench.us(med)} | #{Bench.us(lo)} | #{us1.(rd)} | #{us1.(cmd_less)} | #{us1.(eng)} | #{us1.(rep)} | #{us1.(rest)} |")
    {key, {med, wall, rd + cmd_less + eng + rep, eng, rest}}
  end

# a and b stay referenced until here: the last rows use their handles only,
# and a collected tensor's handle is freed
Nx.backend_deallocate(a)
Nx.backend_deallocate(b)

e = engine[{"add", 1024}]
if e, do: IO.puts("| nxvk bench ops add 1K e2e (in-process, upload+dispatch+download) | #{Bench.us(e["e2e_us"] || 0)} | | | | | | |")

{bm, bwall, bport, beng, brest} = medians[:backend]
{cm, cwall, cport, ceng, crest} = medians[:compiled]
{pm, _, _, _, _} = medians[:ping]

IO.puts("""

Port's share of the 1K Nx.add (median #{Bench.us(bwall)} in the sampled calls; medians of each part): engine #{Bench.us(beng)}, the nxvk process besides the engine #{Bench.us(bport - beng)}, pipes + BEAM + Elixir #{Bench.us(brest)} (a ping round trip: #{Bench.us(pm)}).
The same for the compiled add (median #{Bench.us(cwall)}): engine #{Bench.us(ceng)}, the nxvk process besides the engine #{Bench.us(cport - ceng)}, pipes + BEAM + Elixir #{Bench.us(crest)}.
1K add medians: Nxvk.Backend #{Bench.us(bm)} (target < 60 us on a GPU), Nxvk.Compiler #{Bench.us(cm)} (target < 40 us)\
""")
