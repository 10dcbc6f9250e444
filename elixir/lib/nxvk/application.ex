defmodule Nxvk.Application do
  @moduledoc false
  # Starts the default server, registered as Nxvk.Server, unless the
  # application setting :start_server is false.
  use Application

  @impl true
  def start(_type, _args) do
    # Nx is optional; when it is here its telemetry must run for ours
    if Code.ensure_loaded?(Nx) do
      {:ok, _} = Application.ensure_all_started(:nx)
      Nxvk.Compiler.new_table()
    end

    children =
      if Application.get_env(:nxvk, :start_server, true),
        do: [{Nxvk.Server, name: Nxvk.Server}],
        else: []

    Supervisor.start_link(children, strategy: :one_for_one, name: Nxvk.Supervisor)
  end
end
