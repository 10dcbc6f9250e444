# The suite runs against the real binary (../nxvk, built by make; or
# NXVK_BIN).  A missing binary fails the run: never a skip that reads as a
# pass.
case Nxvk.Server.find_binary() do
  {:ok, _} ->
    :ok

  {:error, message} ->
    IO.puts(:stderr, message)
    System.halt(1)
end

nx? = Code.ensure_loaded?(Nx)

formatters = if nx?, do: [ExUnit.CLIFormatter, Nxvk.NativeCount], else: [ExUnit.CLIFormatter]

# without Nx (NXVK_NO_NX=1) the Nx modules are left out, not passed
exclude = if nx?, do: Nxvk.NxSuite.filters(), else: [:nx]
ExUnit.start(timeout: 180_000, formatters: formatters, exclude: exclude)

defmodule Nxvk.TestHelpers do
  @moduledoc false
  import ExUnit.Assertions

  @doc "Round a double to the nearest f32, as the device stores it."
  def f32(x) when is_float(x) or is_integer(x) do
    <<y::float-32>> = <<x::float-32>>
    y
  end

  def assert_close(got, want, rel \\ 1.0e-5, abs \\ 1.0e-6)

  def assert_close(got, want, rel, abs) when is_list(got) and is_list(want) do
    assert length(got) == length(want), "lengths differ: #{length(got)} vs #{length(want)}"
    Enum.zip(got, want) |> Enum.each(fn {g, w} -> assert_close(g, w, rel, abs) end)
  end

  def assert_close(got, want, rel, abs) when is_number(got) and is_number(want) do
    assert abs(got - want) <= abs + rel * abs(want),
           "got #{inspect(got)}, want #{inspect(want)} (rel #{rel}, abs #{abs})"
  end

  def assert_close(got, want, _rel, _abs), do: assert(got == want)

  def ok!({:ok, v}), do: v
  def ok!(other), do: flunk("expected {:ok, _}, got #{inspect(other)}")

  @doc "Poll the server's stats until fun.(stats) holds (or give the last stats)."
  def wait_stats(server, fun, tries \\ 50) do
    stats = ok!(Nxvk.Server.stats(server))

    cond do
      fun.(stats) ->
        {:ok, stats}

      tries <= 1 ->
        {:timeout, stats}

      true ->
        Process.sleep(50)
        wait_stats(server, fun, tries - 1)
    end
  end
end
