defmodule Nxvk.MixProject do
  use Mix.Project

  # No dependencies: the project builds offline with Debian's elixir (1.14, OTP 25).
  def project do
    [
      app: :nxvk,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: Mix.env() == :prod,
      deps: [],
      test_paths: ["test"]
    ]
  end

  def application do
    [extra_applications: [:logger], mod: {Nxvk.Application, []}]
  end
end
