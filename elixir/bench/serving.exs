# Nx.Serving throughput of a defn model over one device against several
# (partitions: true, one nxvk port per device).
#
#   cd elixir && mix run bench/serving.exs [--devices 0,1] [--map 1=0] [--requests 2000] [--width 1024]
#
# --map N=M opens physical device M for port N (on lavapipe: --map 1=0, two
# ports on the one CPU device).  Prints requests/s for the first device alone,
# then for all of them.

{opts, _, _} =
  OptionParser.parse(System.argv(), strict: [devices: :string, map: :string, requests: :integer, width: :integer])

devices = (opts[:devices] || "0,1") |> String.split(",") |> Enum.map(&String.to_integer/1)
requests = opts[:requests] || 2000
width = opts[:width] || 1024

map =
  for pair <- String.split(opts[:map] || "", ",", trim: true), into: %{} do
    [a, b] = String.split(pair, "=")
    {String.to_integer(a), String.to_integer(b)}
  end

Application.put_env(:nxvk, :device_map, map)

defmodule Model do
  import Nx.Defn
  defn predict(w1, w2, x), do: Nx.dot(Nx.tanh(Nx.dot(x, w1)), w2) |> Nx.sum(axes: [1])
end

key = Nx.Random.key(1)
{w1, key} = Nx.Random.normal(key, 0.0, 0.05, shape: {width, width}, type: :f32)
{w2, _} = Nx.Random.normal(key, 0.0, 0.05, shape: {width, 16}, type: :f32)
x = Nx.iota({1, width}, type: :f32) |> Nx.divide(width)

run = fn devs ->
  Application.put_env(:nxvk, :devices, devs)
  name = :"bench_serving_#{length(devs)}"

  serving =
    Nx.Serving.jit(fn x -> Model.predict(w1, w2, x) end, compiler: Nxvk.Compiler)
    |> Nx.Serving.client_postprocessing(fn {out, _meta}, _info -> Nx.backend_copy(out, Nx.BinaryBackend) end)

  {:ok, pid} = Nx.Serving.start_link(serving: serving, name: name, batch_size: 64, batch_timeout: 2, partitions: true)
  warm = fn -> Nx.Serving.batched_run(name, Nx.Batch.concatenate([x])) end
  for _ <- 1..20, do: warm.()

  {us, _} =
    :timer.tc(fn ->
      1..requests
      |> Task.async_stream(fn _ -> Nx.Serving.batched_run(name, Nx.Batch.concatenate([x])) end,
        max_concurrency: 256, timeout: :infinity)
      |> Stream.run()
    end)

  GenServer.stop(pid)
  requests / (us / 1.0e6)
end

{:ok, info} = Nxvk.Server.info()
IO.puts("device 0: #{info["device"]["name"]}, #{DateTime.utc_now() |> DateTime.truncate(:second)}")
IO.puts("command: mix run bench/serving.exs #{Enum.join(System.argv(), " ")}")
IO.puts("model: x[1,#{width}] . w1[#{width},#{width}] -> tanh -> . w2[#{width},16] -> sum; batch_size 64; #{requests} requests, 256 in flight\n")
one = run.([hd(devices)])
all = run.(devices)
IO.puts("| devices | requests/s | vs one |")
IO.puts("| --- | --- | --- |")
IO.puts("| #{hd(devices)} | #{round(one)} | 1.00 |")
IO.puts("| #{Enum.join(devices, ", ")} | #{round(all)} | #{:io_lib.format("~.2f", [all / one])} |")
