if Code.ensure_loaded?(Nx) do
  defmodule Nxvk.NativeCount do
    @moduledoc false
    # An ExUnit formatter: for the tests that call `Nxvk.NativeCount.track/1`
    # in their setup (the Nx doctest modules), counts the Nxvk.Backend calls
    # they made, from the telemetry event [:nxvk, :backend, :call], and at the
    # end prints, per module: how many passed, how many of those ran entirely
    # natively (at least one backend call, no fallback), and the fallbacks by
    # callback.  Written also to $NXVK_NATIVE_REPORT when set.
    use GenServer

    @table __MODULE__

    def track(%{module: m, test: t}) do
      Process.put(@table, {m, t})
      :ok
    end

    # The fallbacks the issue allows ([nx-ops]): the callbacks that take
    # Elixir functions, fft, the linear algebra that may stay on the host,
    # and any call whose result or inputs are complex.  (Device-capability
    # fallbacks, a type or atomic the device lacks, are not allowed here:
    # the doctests' device, lavapipe or a GPU, stores every type.)
    @allowed ~w(map reduce window_reduce fft ifft fft2 ifft2 qr lu eigh svd)a

    @doc false
    def allowed?(cb, types), do: cb in @allowed or Enum.any?(types, &match?({:c, _}, &1))

    @doc false
    # the fallbacks of test key outside the allowed set: [{callback, types}]
    def disallowed(key) do
      for [cb, types] <- :ets.match(@table, {{:fbt, key, :"$1", :"$2"}}),
          not allowed?(cb, types),
          uniq: true,
          do: {cb, types}
    end

    @doc """
    For a test's setup, after `track/1`: the test fails (from an on_exit
    callback) if it made a fallback outside the allowed set.
    """
    def only_allowed(%{module: m, test: t}) do
      ExUnit.Callbacks.on_exit(fn ->
        case disallowed({m, t}) do
          [] -> :ok
          bad -> raise "fallbacks outside the allowed set: #{inspect(bad)}"
        end
      end)

      :ok
    end

    def handle_event(_event, _measure, %{callback: cb, path: path} = meta, _config) do
      case Process.get(@table) do
        nil ->
          :ok

        key ->
          pos = if path == :native, do: 2, else: 3
          :ets.update_counter(@table, key, {pos, 1}, {key, 0, 0, []})

          if path == :fallback do
            :ets.insert(@table, {{:fb, key, cb}})
            :ets.insert(@table, {{:fbt, key, cb, Map.get(meta, :types, [])}})
          end

          :ok
      end
    end

    @impl true
    def init(_opts) do
      :ets.new(@table, [:named_table, :public, :set, write_concurrency: true])

      :telemetry.attach(
        "nxvk-native-count",
        [:nxvk, :backend, :call],
        &__MODULE__.handle_event/4,
        nil
      )

      {:ok, %{passed: %{}}}
    end

    @impl true
    def handle_cast({:test_finished, %ExUnit.Test{state: nil} = test}, st) do
      key = {test.module, test.name}

      case :ets.lookup(@table, key) do
        [{_, native, fallback, _}] ->
          {:noreply,
           update_in(
             st.passed,
             &Map.update(&1, test.module, [{native, fallback, key}], fn l ->
               [{native, fallback, key} | l]
             end)
           )}

        [] ->
          {:noreply, st}
      end
    end

    def handle_cast({:suite_finished, _}, st) do
      lines =
        for {mod, results} <- Enum.sort(st.passed) do
          native = Enum.count(results, fn {n, f, _} -> n > 0 and f == 0 end)
          fb = Enum.count(results, fn {_, f, _} -> f > 0 end)

          by_cb =
            :ets.match(@table, {{:fb, {mod, :_}, :"$1"}})
            |> List.flatten()
            |> Enum.frequencies()
            |> Enum.sort_by(fn {cb, n} -> {-n, cb} end)
            |> Enum.map_join(" ", fn {cb, n} -> "#{cb}:#{n}" end)

          "nxvk native count: #{inspect(mod)}: #{length(results)} passed with backend calls, " <>
            "#{native} entirely native, #{fb} with fallbacks (fallbacks, in tests: #{by_cb})"
        end

      # every test's fallbacks, with the types they saw (the report file only)
      details =
        for [{m, t}, cb, types] <- :ets.match(@table, {{:fbt, :"$1", :"$2", :"$3"}}) do
          tag = if allowed?(cb, types), do: "allowed", else: "NOT ALLOWED"
          "fallback: #{inspect(m)} #{t}: #{cb} #{inspect(types)} (#{tag})"
        end
        |> Enum.sort()

      # on lines of their own (the CLI formatter may have left a line of dots open)
      IO.puts("")
      Enum.each(lines, &IO.puts/1)

      if path = System.get_env("NXVK_NATIVE_REPORT"),
        do: File.write!(path, Enum.join(lines ++ details, "\n") <> "\n")

      {:noreply, st}
    end

    def handle_cast(_event, st), do: {:noreply, st}
  end
end
