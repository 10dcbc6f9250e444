defmodule Nxvk.MixProject do
  use Mix.Project

  # Builds offline with Debian's elixir (1.14, OTP 25).  Nx is optional: the
  # plain client (Nxvk, Nxvk.Tensor, Nxvk.Server) needs nothing; Nxvk.Backend
  # and Nxvk.Compiler are compiled only when Nx is there.  Nx comes, in order,
  # from $NXVK_NX_PATH, from ../../shared/deps/nx (the source copy beside the
  # repository, for machines without the package registry), or the registry.
  def project do
    [
      app: :nxvk,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: Mix.env() == :prod,
      compilers: [:nxvk_nif] ++ Mix.compilers(),
      deps: deps(),
      test_paths: ["test"],
      # Nx's own test support defines Nx.Container implementations at test time
      consolidate_protocols: Mix.env() != :test,
      elixirc_paths: if(Mix.env() == :test, do: ["lib", "test/support"], else: ["lib"])
    ]
  end

  def application do
    [extra_applications: [:logger], mod: {Nxvk.Application, []}]
  end

  defp deps do
    if System.get_env("NXVK_NO_NX") in ["1", "true"] do
      []
    else
      [nx_dep()]
    end
  end

  defp nx_dep do
    shared = Path.expand("../../shared/deps/nx", __DIR__)

    cond do
      path = System.get_env("NXVK_NX_PATH") -> {:nx, path: path, optional: true}
      File.dir?(shared) -> {:nx, path: shared, optional: true}
      true -> {:nx, "~> 0.7", optional: true}
    end
  end
end

defmodule Mix.Tasks.Compile.NxvkNif do
  @moduledoc false
  # Builds priv/nxvk_gc.so (c_src/nxvk_gc.c) with the C compiler and the
  # erts headers of the running VM: a tiny NIF resource whose destructor
  # only sends a message (no GPU code in the BEAM).  No elixir_make.
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    src = "c_src/nxvk_gc.c"
    out = "priv/nxvk_gc.so"

    if File.exists?(out) and not Mix.Utils.stale?([src], [out]) do
      {:noop, []}
    else
      File.mkdir_p!("priv")
      erts = Path.join([:code.root_dir(), "erts-#{:erlang.system_info(:version)}", "include"])
      include = if File.dir?(erts), do: erts, else: Path.join(:code.root_dir(), "usr/include")
      cc = System.get_env("CC", "cc")

      args =
        ["-std=c11", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-I", include] ++
          ["-o", out, src] ++
          if(:os.type() == {:unix, :darwin}, do: ["-undefined", "dynamic_lookup"], else: [])

      case System.cmd(cc, args, stderr_to_stdout: true) do
        {_, 0} ->
          # links priv/ into _build when this run created it
          Mix.Project.build_structure()
          {:ok, []}

        {text, status} ->
          Mix.shell().error("#{cc} #{Enum.join(args, " ")} failed (#{status}):\n#{text}")
          {:error, []}
      end
    end
  end
end
