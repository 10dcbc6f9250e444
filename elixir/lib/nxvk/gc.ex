defmodule Nxvk.GC do
  @moduledoc """
  Device tensors freed by garbage collection.

  `make/2` wraps a server pid and a handle in a NIF resource (c_src/nxvk_gc.c,
  built into priv/nxvk_gc.so by mix).  When the last term referring to the
  resource is collected, in whatever process holds it, its destructor sends
  `{:nxvk_gc, handle}` to the server, which frees the handle through the
  port.  The NIF does nothing else: no GPU code runs in the BEAM.

  `release/1` disarms a resource whose handle was freed explicitly.
  """
  @on_load :load

  @doc false
  def load do
    path = :filename.join(:code.priv_dir(:nxvk), ~c"nxvk_gc")

    case :erlang.load_nif(path, 0) do
      :ok ->
        :ok

      {:error, {:reload, _}} ->
        :ok

      {:error, reason} ->
        IO.warn("nxvk: cannot load #{path}.so: #{inspect(reason)}")
        :ok
    end
  end

  @doc "A resource that sends `{:nxvk_gc, handle}` to `server` when collected."
  def make(_server, _handle), do: :erlang.nif_error(:nif_not_loaded)

  @doc "Disarms: `:ok` the first time, `:already_released` after."
  def release(_ref), do: :erlang.nif_error(:nif_not_loaded)

  @doc "Whether the resource will still send its message."
  def armed?(_ref), do: :erlang.nif_error(:nif_not_loaded)

  @doc "Whether the NIF is loaded (mix builds it; a missing compiler leaves it out)."
  def available? do
    try do
      _ = armed?(make(self(), 0) |> tap(&release/1))
      true
    rescue
      _ -> false
    end
  end
end
