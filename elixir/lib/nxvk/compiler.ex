if Code.ensure_loaded?(Nx) do
  defmodule Nxvk.Compiler do
    @moduledoc """
    An `Nx.Defn.Compiler` that lowers a whole defn to one port `run` graph.

        Nx.Defn.jit(&MyModel.predict/2, compiler: Nxvk.Compiler).(params, x)

        # or for every defn
        Nx.Defn.global_default_options(compiler: Nxvk.Compiler)

    Each call is one request to the port: the inputs (by handle when they are
    already on the device, else their bytes in the same frame), every op of
    the expression, and the outputs kept on the device.  The engine fuses the
    graph's chains of element-wise ops into single shaders.  The lowering is
    done once per function and input types and shapes, then cached.

    When the expression has a node the graph cannot express (an op the port
    lacks, a type the device does not store (s64 without shaderInt64, c64), control flow:
    `while`, `cond`, tokens and hooks, optional callbacks), the function runs
    through `Nx.Defn.Evaluator` on `Nxvk.Backend` instead (each op then goes
    native or falls back one by one, as `Nxvk.Backend` says), and
    `stats/0` counts it.

    Options: `device: N` (the port, as for `Nxvk.Backend`).
    `__partitions_options__/1` gives one partition per device listed by the
    application setting `:devices` (default `[0]`), so
    `Nx.Serving.new(..., partitions: true)` batches across them.
    """
    @behaviour Nx.Defn.Compiler

    alias Nx.Defn.{Composite, Expr}
    alias Nx.Tensor, as: T
    alias Nxvk.Graph, as: G

    @impl true
    def __partitions_options__(opts) do
      for d <- Application.get_env(:nxvk, :devices, [0]), do: Keyword.put(opts, :device, d)
    end

    @impl true
    def __to_backend__(opts), do: {Nxvk.Backend, device: Keyword.get(opts, :device, 0)}

    @impl true
    def __jit__(key, vars, fun, args_list, opts) do
      __compile__(key, vars, fun, opts).(args_list)
    end

    @impl true
    def __stream__(key, input, acc, vars, fun, args_list, opts) do
      with_backend(opts, fn ->
        Nx.Defn.Evaluator.__stream__(key, input, acc, vars, fun, args_list, opts)
      end)
    end

    @impl true
    def __compile__(key, vars, fun, opts) do
      device = Keyword.get(opts, :device, 0)

      cache_key =
        {key, device,
         Enum.map(List.flatten(composite_templates(vars)), &{&1.type, &1.shape, &1.names})}

      plan =
        case lookup(cache_key) do
          {:ok, plan} ->
            plan

          :error ->
            plan = plan(vars, fun, Nxvk.Backend.int64?(device))
            store(cache_key, plan)
            plan
        end

      case plan do
        {:graph, lowered} ->
          count(:graph)
          fn args_list -> Enum.map(args_list, &run(cache_key, lowered, &1, device)) end

        {:evaluator, why} ->
          count(:evaluator)
          _ = why
          eval = Nx.Defn.Evaluator.__compile__(key, vars, fun, opts)
          fn args_list -> with_backend(opts, fn -> eval.(args_list) end) end
      end
    end

    defp composite_templates(vars), do: Composite.flatten_list(List.wrap(vars))

    defp with_backend(opts, fun) do
      previous = Nx.default_backend(__to_backend__(opts))

      try do
        fun.()
      after
        Nx.default_backend(previous)
      end
    end

    # ------------------------------------------------------------ cache

    @doc false
    # made by the application (its process outlives every caller)
    def new_table,
      do: :ets.new(__MODULE__, [:named_table, :public, :set, read_concurrency: true])

    @doc false
    # the cache (also of the graphs Nxvk.Graph prepares for Nxvk.Backend)
    def table do
      case :ets.whereis(__MODULE__) do
        :undefined -> raise "nxvk: the :nxvk application is not started (Nxvk.Compiler's cache)"
        tid -> tid
      end
    end

    defp lookup(key) do
      case :ets.lookup(table(), key) do
        [{_, plan}] -> {:ok, plan}
        [] -> :error
      end
    end

    defp store(key, plan), do: :ets.insert(table(), {key, plan})

    @doc """
    How many compiled functions ran as one graph and how many through the
    evaluator, and why the last ones could not be lowered:
    `%{graph: n, evaluator: n, lowered: n, not_lowered: [reason]}`.
    """
    def stats do
      c = counters()
      plans = :ets.tab2list(table())

      %{
        graph: :counters.get(c, 1),
        evaluator: :counters.get(c, 2),
        lowered: Enum.count(plans, &match?({_, {:graph, _}}, &1)),
        not_lowered: for({_, {:evaluator, why}} <- plans, do: why) |> Enum.uniq()
      }
    end

    defp counters do
      case :persistent_term.get({__MODULE__, :counters}, nil) do
        nil ->
          c = :counters.new(2, [:write_concurrency])
          :persistent_term.put({__MODULE__, :counters}, c)
          c

        c ->
          c
      end
    end

    defp count(:graph), do: :counters.add(counters(), 1, 1)
    defp count(:evaluator), do: :counters.add(counters(), 2, 1)

    # --------------------------------------------------------- lowering

    # int64: whether the device stores s64/u64 as themselves
    defp plan(vars, fun, int64) do
      expr = fun.(vars)

      try do
        {outputs, st} =
          Composite.traverse(expr, %{nodes: [], n: 0, memo: %{}, params: %{}, int64: int64}, fn
            %T{vectorized_axes: [_ | _]}, _st ->
              unsupported!("vectorized output")

            %T{} = t, st ->
              unless G.native?(t.type, st.int64),
                do: unsupported!("output type #{inspect(t.type)}")

              {v, st} = lower(t, st)
              {%T{t | data: {:nxvk_output, v}}, st}

            other, _st ->
              unsupported!("output #{inspect(other)}")
          end)

        names =
          Composite.flatten_list([outputs])
          |> Enum.map(fn %T{data: {:nxvk_output, v}} -> v end)
          |> Enum.uniq()

        {:graph,
         %{
           nodes: Enum.reverse(st.nodes),
           params: st.params,
           outputs: names,
           result: outputs
         }}
      catch
        {:unsupported, why} -> {:evaluator, why}
      end
    end

    defp unsupported!(why), do: throw({:unsupported, why})

    defp fresh(st), do: {"n#{st.n}", %{st | n: st.n + 1}}

    # nodes are {:input, name, param_index, type}, {:const, name, tensor},
    # {:op, name, op, ins, attrs}
    defp emit(st, node), do: %{st | nodes: [node | st.nodes]}

    defp lower(%T{data: %Expr{id: id}} = t, st) do
      case st.memo do
        %{^id => v} ->
          {v, st}

        _ ->
          if t.vectorized_axes != [], do: unsupported!("vectorized #{t.data.op}")

          {v, st} =
            cond do
              G.native?(t.type, st.int64) -> lower_op(t.data.op, t, st)
              # a count or an index typed s64/u64 by Nx, exact in 32 bits
              narrow?(t, st) -> lower_op(t.data.op, %{t | type: {:s, 32}}, st)
              true -> unsupported!("type #{inspect(t.type)} (#{t.data.op})")
            end

          {v, %{st | memo: Map.put(st.memo, id, v)}}
      end
    end

    defp lower(%T{} = t, _st), do: unsupported!("non-expression #{inspect(t.data.__struct__)}")

    defp op(st, name, ins, attrs \\ %{}) do
      {v, st} = fresh(st)
      {v, emit(st, {:op, v, name, ins, attrs})}
    end

    defp input_as(st, %T{} = t, type) do
      unless G.native?(type, st.int64), do: unsupported!("type #{inspect(type)}")
      {v, st} = lower(t, st)
      have = held_type(t, st)

      if have == type do
        {v, st}
      else
        # as Nx converts (Nxvk.Graph.convert/7)
        node = fn st, name, ins, attrs ->
          (fn {v, st} -> {st, v} end).(op(st, name, ins, attrs))
        end

        const = fn st, number, t ->
          {z, st} = fresh(st)
          {emit(st, {:const, z, Nx.tensor(number, type: t, backend: Nx.BinaryBackend)}), z}
        end

        {st, v} = G.convert(st, v, have, type, st.int64, node, const)
        {v, st}
      end
    end

    # the type a node's value has in the graph: its own, or s32 for the
    # 64-bit counts and indices narrow?/2 admits (without shaderInt64)
    defp held_type(%T{type: type} = t, st) do
      cond do
        G.native?(type, st.int64) -> type
        narrow?(t, st) -> {:s, 32}
        true -> type
      end
    end

    # sums of 0/1 masks (comparisons, is_nan) and arg-reductions: Nx types
    # them 64-bit; their values fit 32 bits exactly while the input has
    # fewer than 2^31 elements
    @masks [:equal, :not_equal, :less, :less_equal, :greater, :greater_equal, :is_nan]
    defp narrow?(
           %T{type: {k, 64}, data: %Expr{op: :sum, args: [%T{data: %Expr{op: m}} = a, _]}},
           _st
         )
         when k in [:s, :u] and m in @masks,
         do: Nx.size(a) < 2_147_483_648

    defp narrow?(%T{type: {k, 64}, data: %Expr{op: op, args: [a, opts]}}, st)
         when k in [:s, :u] and op in [:argmax, :argmin],
         do:
           G.native?(a.type, st.int64) and Keyword.get(opts, :tie_break, :low) == :low and
             Nx.size(a) > 0

    # an integer constant in s32's range
    defp narrow?(%T{type: {k, _}, data: %Expr{op: :constant, args: [c]}}, _st)
         when k in [:s, :u] and is_integer(c),
         do: c >= -2_147_483_648 and c <= 2_147_483_647

    defp narrow?(_, _st), do: false

    defp lower_op(:parameter, %T{data: %Expr{args: [i]}} = t, st) do
      {v, st} = fresh(st)
      {v, %{emit(st, {:input, v, i, t.type}) | params: Map.put(st.params, i, t.type)}}
    end

    defp lower_op(:constant, %T{data: %Expr{args: [c]}} = t, st) do
      unless is_number(c) or c in [:nan, :infinity, :neg_infinity],
        do: unsupported!("complex constant")

      {v, st} = fresh(st)
      scalar = Nx.tensor(c, type: t.type, backend: Nx.BinaryBackend)
      st = emit(st, {:const, v, scalar})
      if t.shape == {}, do: {v, st}, else: broadcast_to(st, v, t.shape)
    end

    # a tensor the function closes over (weights): by handle when it is on
    # the device already (the cached plan keeps it alive), else its bytes
    defp lower_op(:tensor, %T{data: %Expr{args: [lit]}}, st) do
      {v, st} = fresh(st)

      case lit do
        %T{data: %Nxvk.Backend{handle: h}} when is_integer(h) -> {v, emit(st, {:const, v, lit})}
        _ -> {v, emit(st, {:const, v, Nxvk.Backend.to_host(lit)})}
      end
    end

    defp lower_op(:metadata, %T{data: %Expr{args: [expr, _meta]}}, st), do: lower(expr, st)

    @arith ~w(add subtract multiply max min)a
    @float_binary ~w(divide pow atan2)a
    @compare ~w(equal not_equal less less_equal greater greater_equal)a
    @float_unary ~w(exp log sqrt rsqrt sigmoid tanh sin cos expm1 log1p erf
                    tan asin acos atan sinh cosh asinh acosh atanh cbrt erfc erf_inv)a

    defp lower_op(name, %T{data: %Expr{args: [a, b]}} = t, st) when name in @arith do
      binary(st, name, a, b, t.type)
    end

    defp lower_op(name, %T{data: %Expr{args: [a, b]}, type: {k, _}} = t, st)
         when name in @float_binary and k in [:f, :bf] do
      binary(st, name, a, b, t.type)
    end

    defp lower_op(name, %T{data: %Expr{args: [a, b]}}, st) when name in @compare do
      binary(st, name, a, b, Nx.Type.merge(a.type, b.type))
    end

    defp lower_op(name, %T{data: %Expr{args: [a]}, type: {k, _}} = t, st)
         when name in @float_unary and k in [:f, :bf] do
      {x, st} = input_as(st, a, t.type)
      op(st, Atom.to_string(name), [x])
    end

    defp lower_op(name, %T{data: %Expr{args: [a]}} = t, st) when name in [:abs, :negate, :sign] do
      unless t.type in [{:f, 32}, {:f, 64}, {:s, 32}, {:s, 64}] and a.type == t.type,
        do: unsupported!("#{name} of #{inspect(a.type)}")

      {x, st} = lower(a, st)
      op(st, Atom.to_string(name), [x])
    end

    defp lower_op(name, %T{data: %Expr{args: [a]}} = t, st)
         when name in [:floor, :ceil, :round] do
      {x, st} = lower(a, st)
      if float?(t.type), do: op(st, Atom.to_string(name), [x]), else: {x, st}
    end

    defp lower_op(:is_nan, %T{data: %Expr{args: [a]}}, st) do
      unless float?(a.type), do: unsupported!("is_nan of #{inspect(a.type)}")
      {x, st} = lower(a, st)
      op(st, "not_equal", [x, x])
    end

    defp lower_op(:select, %T{data: %Expr{args: [p, a, b]}} = t, st) do
      {pv, st} = lower(p, st)

      {pv, st} =
        if held_type(p, st) == {:u, 8} do
          {pv, st}
        else
          {z, st} = fresh(st)

          st =
            emit(st, {:const, z, Nx.tensor(0, type: held_type(p, st), backend: Nx.BinaryBackend)})

          op(st, "not_equal", [pv, z])
        end

      {x, st} = input_as(st, a, t.type)
      {y, st} = input_as(st, b, t.type)
      {r, st} = op(st, "select", [pv, x, y])
      broadcast_to(st, r, t.shape)
    end

    defp lower_op(:clip, %T{data: %Expr{args: [a, lo, hi]}} = t, st) do
      {x, st} = input_as(st, a, t.type)
      {l, st} = input_as(st, lo, t.type)
      {h, st} = input_as(st, hi, t.type)
      # as Nx.BinaryBackend (Nxvk.Backend.clip/4): NaN and lo > hi included
      {above, st} = op(st, "greater", [x, l])
      {y, st} = op(st, "select", [above, x, l])
      {below, st} = op(st, "less", [y, h])
      op(st, "select", [below, y, h])
    end

    defp lower_op(name, %T{data: %Expr{args: [a, opts]}, type: {k, _}} = t, st)
         when name in [:sum, :product] and k in [:f, :bf] do
      {x, st} = input_as(st, a, t.type)
      op(st, Atom.to_string(name), [x], reduce_attrs(opts))
    end

    # integers as Nx aggregates them (to s64 or u64), wrapping
    defp lower_op(name, %T{data: %Expr{args: [a, opts]}, type: {k, 64}} = t, st)
         when name in [:sum, :product] and k in [:s, :u] do
      {x, st} = input_as(st, a, t.type)
      op(st, Atom.to_string(name), [x], reduce_attrs(opts))
    end

    # a narrowed mask count (see narrow?/2)
    defp lower_op(:sum, %T{data: %Expr{args: [a, opts]}, type: {:s, 32}}, st) do
      {x, st} = input_as(st, a, {:s, 32})
      op(st, "sum", [x], reduce_attrs(opts))
    end

    # the engine's index is i32: cast to Nx's type (s64 by default)
    defp lower_op(name, %T{data: %Expr{args: [a, opts]}, type: {k, _}} = t, st)
         when name in [:argmax, :argmin] and k in [:s, :u] do
      if Keyword.get(opts, :tie_break, :low) != :low or Nx.size(a) == 0,
        do: unsupported!("#{name} with tie_break high or of an empty tensor")

      {r, st} = arg_reduce(name, a, opts, %{t | type: {:s, 32}}, st)

      if t.type == {:s, 32},
        do: {r, st},
        else: op(st, "as_type", [r], %{"dtype" => G.dtype(t.type)})
    end

    defp lower_op(name, %T{data: %Expr{args: [a, opts]}} = t, st)
         when name in [:reduce_max, :reduce_min] do
      if a.type != t.type or Nx.size(a) == 0, do: unsupported!("#{name} of #{inspect(a.type)}")
      {x, st} = lower(a, st)
      op(st, Atom.to_string(name), [x], reduce_attrs(opts))
    end

    defp lower_op(:as_type, %T{data: %Expr{args: [a]}} = t, st), do: input_as(st, a, t.type)

    defp lower_op(name, %T{data: %Expr{args: [a | _]}} = t, st)
         when name in [:reshape, :squeeze] do
      {x, st} = lower(a, st)
      op(st, "reshape", [x], %{"shape" => Tuple.to_list(t.shape)})
    end

    defp lower_op(:transpose, %T{data: %Expr{args: [a, axes]}}, st) do
      {x, st} = lower(a, st)
      op(st, "transpose", [x], %{"perm" => axes})
    end

    defp lower_op(:broadcast, %T{data: %Expr{args: [a, shape, axes]}}, st) do
      if axes != Enum.sort(axes), do: unsupported!("broadcast with unordered axes")
      {x, st} = lower(a, st)
      dims = Tuple.to_list(a.shape)

      lifted =
        for i <- 0..(tuple_size(shape) - 1)//1 do
          case Enum.find_index(axes, &(&1 == i)) do
            nil -> 1
            j -> Enum.at(dims, j)
          end
        end

      {r, st} = op(st, "reshape", [x], %{"shape" => lifted})
      broadcast_to(st, r, shape)
    end

    defp lower_op(:slice, %T{data: %Expr{args: [a, starts, _lengths, strides]}} = t, st) do
      unless Enum.all?(starts, &is_integer/1), do: unsupported!("slice with tensor starts")
      {x, st} = lower(a, st)
      # the port's length counts output elements (Nx's spans the input)
      op(st, "slice", [x], %{
        "start" => starts,
        "length" => Tuple.to_list(t.shape),
        "stride" => strides
      })
    end

    defp lower_op(:concatenate, %T{data: %Expr{args: [list, axis]}} = t, st) do
      {vs, st} =
        Enum.reduce(list, {[], st}, fn a, {vs, st} ->
          {v, st} = input_as(st, a, t.type)
          {[v | vs], st}
        end)

      op(st, "concatenate", Enum.reverse(vs), %{"axis" => axis})
    end

    defp lower_op(:iota, %T{data: %Expr{args: [axis]}} = t, st) do
      if Nx.size(t) == 0, do: unsupported!("empty iota")
      attrs = %{"shape" => Tuple.to_list(t.shape), "dtype" => G.dtype(t.type)}
      op(st, "iota", [], if(axis, do: Map.put(attrs, "axis", axis), else: attrs))
    end

    defp lower_op(:dot, %T{data: %Expr{args: [a, ca, ba, b, cb, bb]}, type: {k, bits}} = t, st)
         when k in [:s, :u] do
      # i32 (results of 8 to 32 bits) or i64, wrapping, then cast: the same
      # low bits as Nx's exact sum written into the result type
      ct = if bits == 64, do: {:s, 64}, else: {:s, 32}
      unless G.native?(ct, st.int64), do: unsupported!("integer dot without shaderInt64")
      {r, st} = dot(a, ca, ba, b, cb, bb, %{t | type: ct}, st)
      if ct == t.type, do: {r, st}, else: op(st, "as_type", [r], %{"dtype" => G.dtype(t.type)})
    end

    defp lower_op(:dot, %T{data: %Expr{args: [a, ca, ba, b, cb, bb]}, type: {k, _}} = t, st)
         when k in [:f, :bf],
         do: dot(a, ca, ba, b, cb, bb, t, st)

    defp lower_op(name, _t, _st), do: unsupported!("op #{name}")

    # f16 f32 f64 and bf16
    defp float?({k, _}), do: k in [:f, :bf]

    defp arg_reduce(name, a, opts, t, st) do
      attrs = %{"keep_axes" => Keyword.get(opts, :keep_axis, false)}
      attrs = if opts[:axis], do: Map.put(attrs, "axes", [opts[:axis]]), else: attrs
      {x, st} = lower(a, st)

      if float?(a.type) do
        # NaN as Nx.BinaryBackend treats it (see Nxvk.Graph.arg_reduce/8)
        fill = if name == :argmax, do: :neg_infinity, else: :infinity
        {nan, st} = op(st, "not_equal", [x, x])
        {f, st} = fresh(st)
        st = emit(st, {:const, f, Nx.tensor(fill, type: a.type, backend: Nx.BinaryBackend)})
        {y, st} = op(st, "select", [nan, f, x])
        {r, st} = op(st, Atom.to_string(name), [y], attrs)
        dims = Tuple.to_list(a.shape)

        {first, st} =
          case opts[:axis] do
            nil ->
              {flat, st} = op(st, "reshape", [nan], %{"shape" => [Enum.product(dims)]})
              op(st, "slice", [flat], %{"start" => [0], "length" => [1]})

            ax ->
              op(st, "slice", [nan], %{
                "start" => List.duplicate(0, length(dims)),
                "length" => List.replace_at(dims, ax, 1)
              })
          end

        {first, st} = op(st, "reshape", [first], %{"shape" => Tuple.to_list(t.shape)})
        {z, st} = fresh(st)
        st = emit(st, {:const, z, Nx.tensor(0, type: :s32, backend: Nx.BinaryBackend)})
        op(st, "select", [first, z, r])
      else
        op(st, Atom.to_string(name), [x], attrs)
      end
    end

    # a to [B, M, K], b to [B, K, N], one batched product in t's type
    defp dot(a, ca, ba, b, cb, bb, t, st) do
      if Nx.size(a) == 0 or Nx.size(b) == 0, do: unsupported!("empty dot")
      {x, st} = input_as(st, a, t.type)
      {y, st} = input_as(st, b, t.type)
      ra = Nx.rank(a)
      rb = Nx.rank(b)
      fa = Enum.to_list(0..(ra - 1)//1) -- (ca ++ ba)
      fb = Enum.to_list(0..(rb - 1)//1) -- (cb ++ bb)
      dim = fn s, axes -> Enum.reduce(axes, 1, &(elem(s, &1) * &2)) end

      {bsz, m, k, n} =
        {dim.(a.shape, ba), dim.(a.shape, fa), dim.(a.shape, ca), dim.(b.shape, fb)}

      {x, st} = permute(st, x, ba ++ fa ++ ca, ra)
      {y, st} = permute(st, y, bb ++ cb ++ fb, rb)
      {x, st} = op(st, "reshape", [x], %{"shape" => [bsz, m, k]})
      {y, st} = op(st, "reshape", [y], %{"shape" => [bsz, k, n]})
      {r, st} = op(st, "dot", [x, y])
      op(st, "reshape", [r], %{"shape" => Tuple.to_list(t.shape)})
    end

    defp permute(st, v, perm, rank) do
      if perm == Enum.to_list(0..(rank - 1)//1),
        do: {v, st},
        else: op(st, "transpose", [v], %{"perm" => perm})
    end

    defp binary(st, name, a, b, type) do
      {x, st} = input_as(st, a, type)
      {y, st} = input_as(st, b, type)
      op(st, Atom.to_string(name), [x, y])
    end

    defp reduce_attrs(opts) do
      attrs = %{"keep_axes" => Keyword.get(opts, :keep_axes, false)}
      if opts[:axes], do: Map.put(attrs, "axes", opts[:axes]), else: attrs
    end

    defp broadcast_to(st, v, shape) do
      {i, st} = op(st, "iota", [], %{"shape" => Tuple.to_list(shape), "dtype" => "u8"})
      {m, st} = op(st, "equal", [i, i])
      op(st, "select", [m, v, v])
    end

    # ---------------------------------------------------------- running

    # A lowered function runs as an `exec` of a graph the port prepared
    # once (nxvk-port(7), prepare): the request names the graph's number
    # and the parameters' handles, nothing else.  That needs every
    # parameter on this device already, in the type the graph was lowered
    # for (else the full `run`, which sends the graph and any bytes), and
    # constants the port can keep: they are put once and held by handle.
    # Off with `config :nxvk, prepare: false` or NXVK_PREPARE=0.
    defp run(cache_key, plan, params, device) do
      server = Nxvk.Backend.server(device)

      with true <- prepare?(),
           {:ok, prep} <- prepared(cache_key, plan, server, device),
           {:ok, handles} <- param_handles(prep.params, params, server),
           {:ok, replies} <- exec(server, prep.graph, handles) do
        result(plan, replies, server, device)
      else
        {:error, {code, _}} when code in [:unknown_handle, :device_lost] ->
          # a kept constant lost with its device, or the graph released: prepare again next time
          :ets.delete(table(), {:prepared, cache_key, server})
          run_graph(plan, params, device)

        _ ->
          run_graph(plan, params, device)
      end
    end

    defp prepare?, do: G.prepare?()

    # {:ok, %{graph: number, params: [{index, type}]}} for this server, made
    # on first use; :none when the graph cannot be prepared (a constant held
    # as bytes)
    defp prepared(cache_key, plan, server, device) do
      key = {:prepared, cache_key, server}

      case :ets.lookup(table(), key) do
        [{_, :none}] ->
          :none

        [{_, prep}] ->
          {:ok, prep}

        [] ->
          prep = prepare(plan, server, device)
          :ets.insert(table(), {key, prep})
          if prep == :none, do: :none, else: {:ok, prep}
      end
    end

    defp prepare(plan, server, device) do
      g = G.new(server, device, Nxvk.Backend.int64?(device))

      {g, names, params, consts} =
        Enum.reduce(plan.nodes, {g, %{}, [], []}, fn
          {:input, v, i, type}, {g, names, ps, cs} ->
            {g, x} = G.param(g)
            {g, Map.put(names, v, x), [{i, type} | ps], cs}

          {:const, v, t}, {g, names, ps, cs} ->
            # kept on the device for as long as the prepared graph (its GC
            # resource rides in the cache entry)
            t = keep_const(t, server, device, g.int64)
            {g, x} = G.input(g, t, t.type)
            {g, Map.put(names, v, x), ps, [t | cs]}

          {:op, v, name, ins, attrs}, {g, names, ps, cs} ->
            {g, x} = G.op(g, name, Enum.map(ins, &Map.fetch!(names, &1)), attrs)
            {g, Map.put(names, v, x), ps, cs}
        end)

      outs = Enum.map(plan.outputs, &Map.fetch!(names, &1))

      with [] <- g.bytes,
           {:ok, %{"graph" => id}, _} <- Nxvk.Server.request(server, G.prepare_header(g, outs)) do
        %{graph: id, params: Enum.reverse(params), consts: consts}
      else
        _ -> :none
      end
    end

    # a constant put on the device by itself (Nxvk.Backend keeps scalars on
    # the host, to ride in each request's frame)
    defp keep_const(%T{data: %Nxvk.Backend{handle: h}} = t, _server, _device, _int64)
         when is_integer(h),
         do: t

    defp keep_const(%T{type: type, shape: shape} = t, server, device, int64) do
      with true <- G.native?(type, int64),
           header = %{"cmd" => "put", "dtype" => G.dtype(type), "shape" => Tuple.to_list(shape)},
           {:ok, %{"handle" => h} = reply, _} <-
             Nxvk.Server.request(server, header, Nxvk.Backend.host_binary(t), gc: true) do
        %T{t | data: %Nxvk.Backend{server: server, handle: h, ref: reply[:gc][h], device: device}}
      else
        # left as it is: its bytes make the graph unpreparable
        _ -> t
      end
    end

    # the parameters' handles, in the prepared graph's order
    defp param_handles(order, params, server) do
      Enum.reduce_while(order, {:ok, []}, fn {i, type}, {:ok, acc} ->
        case Enum.fetch!(params, i).() do
          %T{type: ^type, data: %Nxvk.Backend{handle: h, server: ^server, words: nil}}
          when is_integer(h) ->
            {:cont, {:ok, [h | acc]}}

          _ ->
            {:halt, :no}
        end
      end)
      |> case do
        {:ok, hs} -> {:ok, Enum.reverse(hs)}
        no -> no
      end
    end

    defp exec(server, graph, handles),
      do: G.request_outputs(server, G.exec_header(graph, handles), [])

    defp result(plan, replies, server, device) do
      by_name =
        Enum.zip(plan.outputs, replies)
        |> Map.new(fn {v, %{"handle" => h} = o} ->
          {v, %Nxvk.Backend{server: server, handle: h, ref: o[:ref], device: device}}
        end)

      {result, _} =
        Composite.traverse(plan.result, nil, fn %T{data: {:nxvk_output, v}} = t, acc ->
          {%T{t | data: Map.fetch!(by_name, v)}, acc}
        end)

      result
    end

    defp run_graph(plan, params, device) do
      server = Nxvk.Backend.server(device)
      g = G.new(server, device, Nxvk.Backend.int64?(device))

      {g, names} =
        Enum.reduce(plan.nodes, {g, %{}}, fn
          {:input, v, i, type}, {g, names} ->
            t = Enum.fetch!(params, i).()
            {g, x} = G.input(g, t, type)
            {g, Map.put(names, v, x)}

          {:const, v, t}, {g, names} ->
            {g, x} = G.input(g, t, t.type)
            {g, Map.put(names, v, x)}

          {:op, v, name, ins, attrs}, {g, names} ->
            {g, x} = G.op(g, name, Enum.map(ins, &Map.fetch!(names, &1)), attrs)
            {g, Map.put(names, v, x)}
        end)

      outs = Enum.map(plan.outputs, &Map.fetch!(names, &1))

      case G.run(g, outs) do
        {:ok, replies} ->
          result(plan, replies, server, device)

        {:error, {code, msg}} ->
          raise RuntimeError, "nxvk: compiled defn: #{code}: #{msg}"
      end
    end
  end
end
