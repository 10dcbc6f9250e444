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

    def handle_event(_event, _measure, %{callback: cb, path: path}, _config) do
      case Process.get(@table) do
        nil ->
          :ok

        key ->
          pos = if path == :native, do: 2, else: 3
          :ets.update_counter(@table, key, {pos, 1}, {key, 0, 0, []})
          if path == :fallback, do: :ets.insert(@table, {{:fb, key, cb}})
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
            |> Enum.sort_by(fn {_, n} -> -n end)
            |> Enum.take(12)
            |> Enum.map_join(" ", fn {cb, n} -> "#{cb}:#{n}" end)

          "nxvk native count: #{inspect(mod)}: #{length(results)} passed with backend calls, " <>
            "#{native} entirely native, #{fb} with fallbacks (most common fallbacks, in tests: #{by_cb} ...)"
        end

      # on lines of their own (the CLI formatter may have left a line of dots open)
      IO.puts("")
      Enum.each(lines, &IO.puts/1)

      if path = System.get_env("NXVK_NATIVE_REPORT"),
        do: File.write!(path, Enum.join(lines, "\n") <> "\n")

      {:noreply, st}
    end

    def handle_cast(_event, st), do: {:noreply, st}
  end
end
