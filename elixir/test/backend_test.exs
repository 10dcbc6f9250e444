if Code.ensure_loaded?(Nx) do
  defmodule Nxvk.BackendTest do
    # Nxvk.Backend: native ops, fallbacks and their counts, lifetime (GC,
    # backend_deallocate, tensors passed between processes), the leak loop.
    use ExUnit.Case, async: false
    import Nxvk.TestHelpers
    @moduletag :nx

    setup do
      Nx.default_backend(Nxvk.Backend)
      :ok
    end

    defp live(key \\ "handles"), do: ok!(Nxvk.Server.stats())[key]

    # collect, then wait until the port's handle count is at most
    # want_handles and steady (frees from collection arrive in batches,
    # also from tests that ran before this one)
    defp settle(want_handles, tries \\ 50) do
      :erlang.garbage_collect()
      Process.sleep(60)
      h1 = live()
      Process.sleep(60)
      stats = ok!(Nxvk.Server.stats())

      cond do
        stats["handles"] == h1 and h1 <= want_handles -> {:ok, stats}
        tries <= 1 -> {:timeout, stats}
        true -> settle(want_handles, tries - 1)
      end
    end

    test "conv, cholesky and triangular_solve run natively and agree with Nx.BinaryBackend" do
      Nxvk.Backend.reset_stats()
      key = Nx.Random.key(29) |> Nx.backend_transfer(Nx.BinaryBackend)
      {x, key} = Nx.Random.normal(key, shape: {4, 4, 7, 6})
      {w, key} = Nx.Random.normal(key, shape: {6, 2, 3, 2})
      {xh, key} = Nx.Random.normal(key, shape: {2, 6, 5, 4})
      {wh, key} = Nx.Random.normal(key, shape: {3, 2, 4, 5})
      {wb, _key} = Nx.Random.normal(key, shape: {6, 4, 3, 2})

      convs = [
        {x, w, [feature_group_size: 2]},
        {x, w, [feature_group_size: 2, strides: [2, 1], padding: :same]},
        {x, w,
         [
           feature_group_size: 2,
           padding: [{1, 2}, {-1, 0}],
           input_dilation: [2, 1],
           kernel_dilation: [1, 2]
         ]},
        {x, wb, [batch_group_size: 2, strides: [1, 2]]},
        # NHWC input, HWIO kernel, NHWC output
        {xh, wh,
         [
           input_permutation: [0, 3, 1, 2],
           kernel_permutation: [3, 2, 0, 1],
           output_permutation: [0, 3, 1, 2],
           padding: :same
         ]},
        {Nx.as_type(x, :s32), Nx.as_type(w, :s32), [feature_group_size: 2]},
        {Nx.as_type(x, :f16), Nx.as_type(w, :f16), [feature_group_size: 2]}
      ]

      for {a, k, opts} <- convs do
        got =
          Nx.conv(
            Nx.backend_transfer(a, Nxvk.Backend),
            Nx.backend_transfer(k, Nxvk.Backend),
            opts
          )

        want = Nx.with_default_backend(Nx.BinaryBackend, fn -> Nx.conv(bin(a), bin(k), opts) end)

        assert got.type == want.type and got.shape == want.shape,
               inspect({opts, got.shape, want.shape})

        tol = if got.type == {:f, 16}, do: 2.0e-2, else: 2.0e-6
        assert_close(Nx.to_flat_list(got), Nx.to_flat_list(want), tol, 1.0e-4)
      end

      spd =
        Nx.tensor([
          [[6.0, 1.0, 2.0], [1.0, 5.0, 0.5], [2.0, 0.5, 4.0]],
          [[2.0, 3.0, 0.0], [3.0, 5.0, 1.0], [0.0, 1.0, 3.0]]
        ])

      assert_close(
        Nx.to_flat_list(Nx.LinAlg.cholesky(spd)),
        Nx.to_flat_list(
          Nx.with_default_backend(Nx.BinaryBackend, fn -> Nx.LinAlg.cholesky(bin(spd)) end)
        ),
        1.0e-6,
        1.0e-5
      )

      l = Nx.tensor([[3.0, 0.0, 0.0], [2.0, 1.0, 0.0], [1.0, -1.0, 2.0]], type: :f64)
      b = Nx.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], type: :f64)

      for opts <- [
            [],
            [lower: false, transform_a: :transpose],
            [left_side: false, transform_a: :transpose]
          ] do
        {bb, aa} = if opts[:left_side] == false, do: {Nx.transpose(b), l}, else: {b, l}
        aa = if opts[:lower] == false, do: Nx.transpose(aa), else: aa
        got = Nx.LinAlg.triangular_solve(aa, bb, opts)

        want =
          Nx.with_default_backend(Nx.BinaryBackend, fn ->
            Nx.LinAlg.triangular_solve(bin(aa), bin(bb), opts)
          end)

        assert got.shape == want.shape
        assert_close(Nx.to_flat_list(got), Nx.to_flat_list(want), 1.0e-14, 1.0e-12)
      end

      assert_raise ArgumentError, ~r/singular/, fn ->
        Nx.LinAlg.triangular_solve(Nx.tensor([[1.0, 0.0], [1.0, 0.0]]), Nx.tensor([1.0, 2.0]))
      end

      stats = Nxvk.Backend.stats()
      assert stats[:conv] == %{native: length(convs), fallback: 0}
      assert stats[:cholesky] == %{native: 1, fallback: 0}
      assert stats[:triangular_solve] == %{native: 3, fallback: 0}
    end

    test "Nx ops run natively on the device and agree with Nx.BinaryBackend" do
      Nxvk.Backend.reset_stats()
      a = Nx.tensor([[1.5, -2.0, 3.25], [4.0, 0.5, -6.0]])
      b = Nx.tensor([[0.5], [2.0]])
      assert %Nxvk.Backend{handle: h} = a.data
      assert is_integer(h)

      checks = [
        {Nx.add(a, b), Nx.add(bin(a), bin(b))},
        {Nx.multiply(a, 2.0), Nx.multiply(bin(a), 2.0)},
        {Nx.dot(a, Nx.transpose(a)), Nx.dot(bin(a), Nx.transpose(bin(a)))},
        {Nx.sum(a, axes: [1]), Nx.sum(bin(a), axes: [1])},
        {Nx.reduce_max(a), Nx.reduce_max(bin(a))},
        {Nx.argmax(a, axis: 1), Nx.argmax(bin(a), axis: 1)},
        {Nx.tanh(a), Nx.tanh(bin(a))},
        {Nx.broadcast(b, {2, 3}), Nx.broadcast(bin(b), {2, 3})},
        {Nx.slice(a, [0, 1], [2, 2]), Nx.slice(bin(a), [0, 1], [2, 2])},
        {Nx.less(a, 1.0), Nx.less(bin(a), 1.0)},
        {Nx.as_type(a, :s32), Nx.as_type(bin(a), :s32)}
      ]

      for {got, want} <- checks do
        assert got.type == want.type and got.shape == want.shape
        assert_close(Nx.to_flat_list(got), Nx.to_flat_list(want), 2.0e-7, 1.0e-6)
      end

      stats = Nxvk.Backend.stats()

      for cb <- [
            :add,
            :multiply,
            :dot,
            :sum,
            :reduce_max,
            :argmax,
            :tanh,
            :broadcast,
            :slice,
            :less,
            :as_type
          ] do
        assert %{native: n, fallback: 0} = stats[cb], "#{cb}: #{inspect(stats[cb])}"
        assert n >= 1
      end
    end

    test "clip (NaN and lo > hi as Nx), integer pow, remainder and to_batched run natively, bit for bit as Nx" do
      Nxvk.Backend.reset_stats()
      f = Nx.tensor([1.0, :nan, -3.0, 5.0, :infinity, :neg_infinity, 2.5])
      i = Nx.tensor([[3, -2, 5], [0, 1, 7]])
      u = Nx.tensor([2, 3, 255], type: :u8)
      # Nx's answer, every operand (numbers included) on the binary backend
      nx = fn fun -> Nx.with_default_backend(Nx.BinaryBackend, fun) end

      checks =
        for(
          {lo, hi} <- [{0.0, 3.0}, {:nan, 3.0}, {0.0, :nan}, {4.0, 2.0}],
          do: {:clip, Nx.clip(f, lo, hi), nx.(fn -> Nx.clip(bin(f), lo, hi) end)}
        ) ++
          [
            {:clip, Nx.clip(i, 2.0, 3), nx.(fn -> Nx.clip(bin(i), 2.0, 3) end)},
            # an exponent held in the BEAM, then one on the device (every bit walked)
            {:pow, Nx.pow(i, 3), nx.(fn -> Nx.pow(bin(i), 3) end)},
            {:pow, Nx.pow(Nx.tensor([3, -3, 12_345]), Nx.tensor([40, 41, 5])),
             Nx.pow(
               Nx.tensor([3, -3, 12_345], backend: Nx.BinaryBackend),
               Nx.tensor([40, 41, 5], backend: Nx.BinaryBackend)
             )},
            {:pow, Nx.pow(u, Nx.tensor([7, 8, 1], type: :u8)),
             Nx.pow(bin(u), Nx.tensor([7, 8, 1], type: :u8, backend: Nx.BinaryBackend))},
            {:remainder, Nx.remainder(i, 3), nx.(fn -> Nx.remainder(bin(i), 3) end)},
            {:remainder, Nx.remainder(Nx.tensor(-11, type: :s8), Nx.tensor(10, type: :u8)),
             Nx.remainder(
               Nx.tensor(-11, type: :s8, backend: Nx.BinaryBackend),
               Nx.tensor(10, type: :u8, backend: Nx.BinaryBackend)
             )},
            {:remainder, Nx.remainder(Nx.tensor([5.5, -5.5, 1.0e10]), 3.0),
             nx.(fn -> Nx.remainder(Nx.tensor([5.5, -5.5, 1.0e10]), 3.0) end)}
          ]

      for {name, got, want} <- checks do
        assert {got.type, got.shape, Nx.to_binary(got)} ==
                 {want.type, want.shape, Nx.to_binary(want)},
               "#{name}: #{inspect(got)} vs #{inspect(want)}"
      end

      x = Nx.iota({5, 2}, names: [:x, :y])

      for leftover <- [:repeat, :discard] do
        got = Nx.to_batched(x, 2, leftover: leftover) |> Enum.to_list()
        want = nx.(fn -> Nx.to_batched(bin(x), 2, leftover: leftover) |> Enum.to_list() end)

        assert Enum.map(got, &{&1.shape, &1.names, Nx.to_binary(&1)}) ==
                 Enum.map(want, &{&1.shape, &1.names, Nx.to_binary(&1)})
      end

      stats = Nxvk.Backend.stats()

      for cb <- [:clip, :pow, :remainder, :to_batched] do
        assert %{native: n, fallback: 0} = stats[cb], "#{cb}: #{inspect(stats[cb])}"
        assert n >= 1
      end

      # a negative exponent held in the BEAM: raises as Nx, without a fallback
      assert_raise ArithmeticError, "bad argument in arithmetic expression", fn ->
        Nx.pow(i, -1)
      end

      assert Nxvk.Backend.stats()[:pow].fallback == 0
    end

    # each of these fell back once ([nx-ops]: the fallback list holds only
    # what takes functions, fft, complex types and qr/lu/eigh/svd)
    test "former fallbacks run natively, bit for bit as Nx.BinaryBackend" do
      Nxvk.Backend.reset_stats()

      same = fn name, got, want ->
        assert {got.type, got.shape, Nx.to_binary(got)} ==
                 {want.type, want.shape, Nx.to_binary(want)},
               "#{name}: #{inspect(got)} vs #{inspect(want)}"
      end

      # max / min of a u64 and a signed integer: compared exactly, as Nx
      u = Nx.tensor([0, 5, 18_446_744_073_709_551_615, 9_223_372_036_854_775_808], type: :u64)
      s = Nx.tensor([-1, 7, 3, -9_223_372_036_854_775_808], type: :s64)
      s8 = Nx.tensor([-1, 7, 3, 100], type: :s8)

      for {x, y} <- [{u, s}, {s, u}, {u, s8}, {s8, u}, {u, Nx.tensor(-2)}], f <- [:max, :min] do
        same.(f, apply(Nx, f, [x, y]), apply(Nx, f, [bin(x), bin(y)]))
      end

      # abs, negate and sign of every type (unsigned: the value, 0 - x, min(x, 1))
      for ty <- [:s8, :s16, :s32, :s64, :u8, :u16, :u32, :u64, :f16, :bf16, :f32, :f64],
          f <- [:abs, :negate, :sign] do
        x =
          if match?({:u, _}, Nx.Type.normalize!(ty)),
            do: Nx.tensor([0, 1, 7, 200], type: ty),
            else: Nx.tensor([-3, 0, 1, 7, -100, 127], type: ty)

        same.("#{f} #{ty}", apply(Nx, f, [x]), apply(Nx, f, [bin(x)]))
      end

      # bf16 is a float type like f16 (floor of bf16 once gave its input back)
      h = Nx.tensor([1.5, -2.25, 3.75, 0.5, -0.5], type: :bf16)
      hn = Nx.tensor([1.5, :nan, 3.75, :nan, -0.5], type: :bf16)

      for {name, f, x} <- [
            {:floor, &Nx.floor/1, h},
            {:ceil, &Nx.ceil/1, h},
            {:round, &Nx.round/1, h},
            {:divide, &Nx.divide(&1, 4), h},
            {:pow, &Nx.pow(Nx.abs(&1), 2), h},
            {:sum, &Nx.sum/1, h},
            {:argmax, &Nx.argmax/1, hn},
            {:argmin, &Nx.argmin(&1, tie_break: :high), hn}
          ] do
        same.("#{name} bf16", f.(x), f.(bin(x)))
      end

      jit = Nx.Defn.jit(&{Nx.floor(&1), Nx.argmax(&1)}, compiler: Nxvk.Compiler)
      {fl, am} = jit.(hn)
      assert {fl.type, Nx.to_flat_list(fl)} == {{:bf, 16}, [1.0, :nan, 3.0, :nan, -1.0]}
      assert Nx.to_number(am) == Nx.to_number(Nx.argmax(bin(hn)))

      # a negative shift count raises Nx.BinaryBackend's error, naming the first
      for {f, word} <- [left_shift: "left", right_shift: "right"] do
        assert_raise ArgumentError, "cannot #{word} shift by -2", fn ->
          apply(Nx, f, [Nx.tensor([1, 2, 3, 4]), Nx.tensor([1, -2, 0, -3])])
        end
      end

      # pad of an input without elements: all pad value, interior padding too
      # (Nx.BinaryBackend cannot pad it: Nx's shape, filled)
      e = Nx.pad(Nx.tensor([[1, 2], [3, 4]]), 0, [{0, 0, 0}, {-2, 0, 0}])
      assert e.shape == {2, 0}
      p = Nx.pad(e, 7, [{1, 0, 1}, {2, 1, 0}])
      assert {p.shape, Nx.to_flat_list(p)} == {{4, 3}, List.duplicate(7, 12)}
      assert Nx.pad(e, 7, [{1, 0, 1}, {1, 2, 3}]).shape == {4, 0}

      # updates smaller than the target's other axes: written from the start
      # of each (flattened) row, as Nx.BinaryBackend writes them
      t = Nx.iota({2, 3, 4}, type: :f32)

      for {idx, upd, opts} <- [
            {Nx.tensor([[1], [0], [1]]), Nx.iota({3, 2, 2}, type: :f32), []},
            {Nx.tensor([[2], [0]], type: :s32), Nx.tensor([[[1, 2, 3]], [[5, 6, 7]]]),
             [axes: [2]]},
            {Nx.tensor([[1, 3], [0, 0], [1, 3]]), Nx.tensor([[10, 20], [30, 40], [1, 1]]),
             [axes: [0, 2]]},
            {Nx.tensor([[0], [1]], type: :u8), Nx.iota({2, 1, 4}), []}
          ],
          f <- [:indexed_add, :indexed_put] do
        same.(
          "#{f} #{inspect(upd.shape)}",
          apply(Nx, f, [t, idx, upd, opts]),
          apply(Nx, f, [bin(t), bin(idx), bin(upd), opts])
        )
      end

      # bitcast between every pair of one width: the same bytes (NaN
      # payloads, -0 and denormals of the floats kept)
      bits = for i <- 0..63, into: <<>>, do: <<i * 0x0403_0201_5A6B_7C8D + i * i::64>>

      specials =
        <<0x7FF0_0000_0000_0123::64-little, 0x8000_0000_0000_0000::64-little, 1::64-little>>

      raw = specials <> bits

      for group <- [[:f16, :bf16, :s16, :u16], [:f32, :s32, :u32], [:f64, :s64, :u64], [:s8, :u8]],
          from <- group,
          to <- group do
        x = Nx.from_binary(raw, from)
        got = Nx.bitcast(x, to)

        assert {got.type, Nx.to_binary(got)} == {Nx.Type.normalize!(to), raw},
               "bitcast #{from} to #{to}"

        same.("bitcast #{from} #{to}", got, Nx.bitcast(bin(x), to))
      end

      # a scalar held in the BEAM
      same.(
        "bitcast scalar",
        Nx.bitcast(Nx.tensor(-1, type: :s32), :f32),
        Nx.bitcast(bin(Nx.tensor(-1, type: :s32)), :f32)
      )

      # more inputs than the port takes in one op
      parts = for i <- 1..150, do: Nx.tensor([i, -i])
      same.(:concatenate, Nx.concatenate(parts), Nx.concatenate(Enum.map(parts, &bin/1)))

      # an empty contraction sums to 0
      ef = Nx.as_type(e, :f32)
      assert Nx.to_flat_list(Nx.dot(ef, Nx.transpose(ef))) == [0.0, 0.0, 0.0, 0.0]
      assert Nx.dot(Nx.transpose(ef), ef).shape == {0, 0}

      stats = Nxvk.Backend.stats()
      assert [] == for({cb, %{fallback: f}} <- stats, f > 0, do: cb), inspect(stats)

      for cb <- [
            :max,
            :min,
            :abs,
            :negate,
            :sign,
            :pad,
            :indexed_add,
            :indexed_put,
            :concatenate,
            :dot,
            :bitcast
          ] do
        assert %{native: n} = stats[cb], "#{cb}: #{inspect(stats[cb])}"
        assert n >= 1
      end
    end

    test "tan, the inverse and hyperbolic functions, cbrt, erfc and erf_inv run natively and agree with Nx" do
      Nxvk.Backend.reset_stats()
      x = Nx.tensor([-0.9, -0.5, -0.1, 0.0, 0.25, 0.75, 0.99], type: :f32)
      big = Nx.tensor([1.0, 1.5, 2.0, 7.5, 100.0], type: :f64)
      cube = Nx.tensor([-8.0, 27.0, 0.001, -1.0e-30], type: :f32)

      checks =
        for op <- [:tan, :asin, :acos, :atan, :sinh, :cosh, :asinh, :atanh, :erfc, :erf_inv] do
          {op, apply(Nx, op, [x]), apply(Nx, op, [bin(x)])}
        end ++
          [
            {:acosh, Nx.acosh(big), Nx.acosh(bin(big))},
            {:cosh, Nx.cosh(big), Nx.cosh(bin(big))},
            {:cbrt, Nx.cbrt(cube), Nx.cbrt(bin(cube))}
          ]

      for {op, got, want} <- checks do
        assert got.type == want.type and got.shape == want.shape, "#{op}"
        assert_close(Nx.to_flat_list(got), Nx.to_flat_list(want), 1.0e-6, 1.0e-6)
      end

      assert Nx.to_flat_list(Nx.cbrt(Nx.tensor([-8.0]))) == [-2.0]
      assert Nx.to_flat_list(Nx.atanh(Nx.tensor([1.0, -1.0]))) == [:infinity, :neg_infinity]
      assert Nx.to_flat_list(Nx.erf_inv(Nx.tensor([1.0, -1.0]))) == [:infinity, :neg_infinity]
      assert [nan] = Nx.to_flat_list(Nx.asin(Nx.tensor([1.5])))
      assert nan == :nan
      stats = Nxvk.Backend.stats()

      for cb <- [
            :tan,
            :asin,
            :acos,
            :atan,
            :sinh,
            :cosh,
            :asinh,
            :acosh,
            :atanh,
            :cbrt,
            :erfc,
            :erf_inv
          ] do
        assert %{native: n, fallback: 0} = stats[cb], "#{cb}: #{inspect(stats[cb])}"
        assert n >= 1
      end
    end

    test "shape and indexing ops run natively and agree with Nx.BinaryBackend" do
      Nxvk.Backend.reset_stats()
      t = Nx.iota({4, 5, 3}, type: :f32) |> Nx.multiply(0.5)
      v = Nx.tensor(-1.0)

      for ity <- [:s32, :u8, :s16, :s64, :u64] do
        i2 = Nx.tensor([[3, 1], [0, 4], [3, 1], [2, 2]], type: ity)
        i1 = Nx.tensor([[2, 0, 1, 1], [0, 0, 2, 1]], type: ity)

        ia =
          Nx.tensor(
            [
              [[2], [0], [1], [4], [4]],
              [[0], [1], [1], [3], [2]],
              [[1], [1], [1], [1], [1]],
              [[4], [3], [2], [1], [0]]
            ],
            type: ity
          )
          |> Nx.reshape({4, 5, 1})

        rows = Nx.tensor([[1], [3], [1], [0]], type: ity)
        upd = Nx.iota({4, 5, 3}, type: :f32) |> Nx.add(1.0)

        checks = [
          {Nx.pad(t, v, [{1, -1, 1}, {-2, 0, 0}, {0, 2, 2}]),
           Nx.pad(bin(t), bin(v), [{1, -1, 1}, {-2, 0, 0}, {0, 2, 2}])},
          {Nx.put_slice(t, [1, Nx.tensor(3, type: ity), 0], Nx.broadcast(7.0, {2, 2, 3})),
           Nx.put_slice(bin(t), [1, 3, 0], Nx.broadcast(bin(Nx.tensor(7.0)), {2, 2, 3}))},
          {Nx.slice(t, [Nx.tensor(2, type: ity), 1, 0], [2, 3, 2], strides: [1, 2, 1]),
           Nx.slice(bin(t), [2, 1, 0], [2, 3, 2], strides: [1, 2, 1])},
          {Nx.gather(t, i2), Nx.gather(bin(t), bin(i2))},
          {Nx.gather(t, Nx.min(i2, 2), axes: [0, 2]),
           Nx.gather(bin(t), bin(Nx.min(i2, 2)), axes: [0, 2])},
          {Nx.take(t, i1, axis: 1), Nx.take(bin(t), bin(i1), axis: 1)},
          {Nx.take_along_axis(t, Nx.broadcast(ia, {4, 5, 3}), axis: 1),
           Nx.take_along_axis(bin(t), Nx.broadcast(bin(ia), {4, 5, 3}), axis: 1)},
          {Nx.indexed_add(t, rows, upd), Nx.indexed_add(bin(t), bin(rows), bin(upd))},
          {Nx.indexed_put(t, rows, upd), Nx.indexed_put(bin(t), bin(rows), bin(upd))},
          {Nx.broadcast(Nx.tensor([1.0, 2.0]), {2, 3}, axes: [0]),
           Nx.broadcast(bin(Nx.tensor([1.0, 2.0])), {2, 3}, axes: [0])}
        ]

        for {got, want} <- checks do
          assert got.type == want.type and got.shape == want.shape
          assert Nx.to_flat_list(got) == Nx.to_flat_list(want)
        end
      end

      # integer targets: duplicates add exactly; the last duplicate is put
      x = Nx.tensor([10, 20, 30], type: :s32)
      ix = Nx.tensor([[2], [0], [2], [2]], type: :s32)
      up = Nx.tensor([1, 2, 3, 4], type: :s32)
      assert Nx.to_flat_list(Nx.indexed_add(x, ix, up)) == [12, 20, 38]
      assert Nx.to_flat_list(Nx.indexed_put(x, ix, up)) == [2, 20, 4]
      # out of range: clamped by take, dropped by indexed_add (as EXLA)
      assert Nx.to_flat_list(Nx.take(x, Nx.tensor([-1, 7], type: :s32))) == [10, 30]

      assert Nx.to_flat_list(
               Nx.indexed_add(x, Nx.tensor([[5], [1]], type: :s32), Nx.tensor([1, 1], type: :s32))
             ) ==
               [10, 21, 30]

      stats = Nxvk.Backend.stats()

      for cb <- [
            :pad,
            :put_slice,
            :slice,
            :gather,
            :take,
            :take_along_axis,
            :indexed_add,
            :indexed_put,
            :broadcast
          ] do
        assert %{native: n, fallback: 0} = stats[cb], "#{cb}: #{inspect(stats[cb])}"
        assert n >= 1
      end
    end

    # s64 (Nx's default integer) and u64 ops with two's complement
    # wrapping, comparisons, reductions, dot, as_type, movement, iota: each
    # the same bytes as Nx.BinaryBackend gives, run natively
    defp int64_checks(backend) do
      max = 9_223_372_036_854_775_807
      big = 9_007_199_254_740_993
      s = Nx.tensor([[max, -max - 1, big], [-big, 16_777_217, -1]], type: :s64, backend: backend)
      u = Nx.tensor([18_446_744_073_709_551_615, big, 3], type: :u64, backend: backend)
      n = Nx.tensor([[3, -2, 7], [1, 0, -5]], type: :s64, backend: backend)
      i8 = Nx.tensor([[100, -100, 27], [1, 2, 3]], type: :s8, backend: backend)
      # finite floats beyond the integer's range are left out: Nx does not
      # define them (its BinaryBackend wraps, the engine saturates)
      f =
        Nx.tensor([1.5, -2.5, -4.0e18, 3.0e9, :infinity, :neg_infinity, :nan],
          type: :f64,
          backend: backend
        )

      [
        add: &Nx.add(&1, 1),
        add2: fn _ -> Nx.add(s, n) end,
        subtract: &Nx.subtract(&1, n),
        multiply: &Nx.multiply(&1, 3),
        max: &Nx.max(&1, n),
        min: &Nx.min(&1, n),
        negate: &Nx.negate/1,
        abs: &Nx.abs/1,
        sign: &Nx.sign/1,
        equal: &Nx.equal(&1, n),
        less: &Nx.less(&1, n),
        greater_equal: &Nx.greater_equal(&1, 0),
        sum: &Nx.sum/1,
        sum_axis: &Nx.sum(&1, axes: [0]),
        product: &Nx.product(&1, axes: [1]),
        reduce_max: &Nx.reduce_max(&1, axes: [1]),
        reduce_min: &Nx.reduce_min/1,
        argmax: &Nx.argmax(&1, axis: 1),
        argmin: &Nx.argmin/1,
        dot: &Nx.dot(&1, Nx.transpose(n)),
        select: &Nx.select(Nx.greater(&1, 0), &1, n),
        clip: &Nx.clip(&1, -5, 5),
        transpose: &Nx.transpose/1,
        reshape: &Nx.reshape(&1, {3, 2}),
        slice: &Nx.slice(&1, [0, 1], [2, 2]),
        concatenate: &Nx.concatenate([&1, n]),
        broadcast: &Nx.broadcast(Nx.slice(&1, [0, 0], [1, 3]), {4, 3}),
        iota: fn _ -> Nx.iota({2, 3}, axis: 1, backend: backend) end,
        sum_s8: fn _ -> Nx.sum(i8, axes: [1]) end,
        dot_s8: fn _ -> Nx.dot(i8, Nx.transpose(i8)) end,
        argmax_f: fn _ -> Nx.argmax(f) end
      ]
      |> Enum.map(fn {name, fun} -> {name, fun.(s)} end)
      |> Kernel.++(
        for ty <- [:s8, :s16, :s32, :u8, :u16, :u32, :u64, :f16, :bf16, :f32, :f64] do
          {:"as_type_#{ty}", Nx.as_type(s, ty)}
        end
      )
      |> Kernel.++(for ty <- [:s64, :u64], do: {:"as_type_f64_#{ty}", Nx.as_type(f, ty)})
      |> Kernel.++(
        u_add: Nx.add(u, 5),
        u_multiply: Nx.multiply(u, u),
        u_less: Nx.less(u, 4),
        u_greater: Nx.greater(Nx.tensor([-1, 5, 7], backend: backend), u),
        u_max: Nx.max(u, Nx.tensor(-1, backend: backend)),
        u_sum: Nx.sum(u),
        u_argmax: Nx.argmax(u),
        u_negate: Nx.negate(u),
        u8_negate: Nx.negate(Nx.tensor([5, 0, 200], type: :u8, backend: backend)),
        argmax_scalar: Nx.argmax(Nx.tensor(7, backend: backend)),
        u_as_type_s64: Nx.as_type(u, :s64),
        u_as_type_f32: Nx.as_type(u, :f32)
      )
    end

    # the same checks on Nx.BinaryBackend
    defp int64_want do
      Nx.default_backend(Nx.BinaryBackend)
      try do: int64_checks(Nx.BinaryBackend), after: Nx.default_backend(Nxvk.Backend)
    end

    defp assert_int64_checks(got, want) do
      assert length(got) == length(want)

      for {{name, g}, {name, w}} <- Enum.zip(got, want) do
        assert %Nxvk.Backend{} = g.data
        assert %Nx.BinaryBackend{} = w.data
        assert {g.type, g.shape} == {w.type, w.shape}, "#{name}: #{inspect(g)} vs #{inspect(w)}"
        assert Nx.to_binary(g) == Nx.to_binary(w), "#{name}: #{inspect(g)} vs #{inspect(w)}"
      end
    end

    test "s64 and u64 are the engine's i64 and u64: every op native, bit for bit as Nx's" do
      assert Nxvk.Backend.int64?(0), "lavapipe has shaderInt64"
      t = Nx.tensor([1, 2, 3])
      assert %Nxvk.Backend{words: nil, handle: h} = t.data
      assert is_integer(h)
      Nxvk.Backend.reset_stats()
      got = int64_checks({Nxvk.Backend, device: 0})
      assert_int64_checks(got, int64_want())
      stats = Nxvk.Backend.stats()
      # every one, the max of a u64 and a signed value (exact in Nx) too
      assert [] == for({cb, %{fallback: f}} <- stats, f > 0, do: cb), inspect(stats)
      assert %{max: %{fallback: 0}} = stats
      # quotient is an engine op ([nx-ops] intops): native, and counted
      assert Nx.to_flat_list(Nx.quotient(t, 2)) == [0, 1, 1]
      assert %{native: 1, fallback: 0} = Nxvk.Backend.stats()[:quotient]
    end

    test "without shaderInt64 (a port with NXVK_TEST_INJECT=no_int64) s64/u64 are held as words, exactly" do
      Application.put_env(:nxvk, :device_map, %{3 => 0})
      Application.put_env(:nxvk, :device_env, %{3 => [{"NXVK_TEST_INJECT", "no_int64"}]})

      on_exit(fn ->
        Application.delete_env(:nxvk, :device_map)
        Application.delete_env(:nxvk, :device_env)
      end)

      refute Nxvk.Backend.int64?(3)
      assert {:ok, %{"dtypes" => dtypes}} = Nxvk.Server.info(Nxvk.Backend.server(3))
      refute "i64" in dtypes
      Nxvk.Backend.reset_stats()
      got = int64_checks({Nxvk.Backend, device: 3})
      assert_int64_checks(got, int64_want())
      big = 9_007_199_254_740_993
      t = Nx.tensor([big, -big, 1], type: :s64, backend: {Nxvk.Backend, device: 3})
      assert %Nxvk.Backend{words: 2, device: 3} = t.data
      stats = Nxvk.Backend.stats()
      # what the words path runs natively
      for cb <- [
            :add,
            :subtract,
            :multiply,
            :equal,
            :less,
            :greater_equal,
            :sum,
            :select,
            :transpose,
            :reshape,
            :slice,
            :concatenate,
            :broadcast,
            :iota
          ] do
        assert %{native: n} = stats[cb], "#{cb}: #{inspect(stats[cb])}"
        assert n >= 1, "#{cb}: #{inspect(stats[cb])}"
      end

      # the argmax of a device type is widened to s64 words on the device
      assert %{argmax: %{native: n}} = stats
      assert n >= 1
      # ops the words lack fall back, counted
      assert %{fallback: f} = stats[:dot]
      assert f >= 1

      for type <- [:s8, :s16, :u16, :u32, :f16, :bf16, :c64] do
        x = Nx.tensor([1, 2, 3], type: type, backend: {Nxvk.Backend, device: 3})
        assert Nx.to_flat_list(Nx.multiply(x, x)) == Nx.to_flat_list(Nx.multiply(bin(x), bin(x)))
      end

      events = :telemetry_test.attach_event_handlers(self(), [[:nxvk, :backend, :call]])
      Nx.map(Nx.tensor([3.0, 1.0, 2.0]), &Nx.add(&1, 1))

      assert_received {[:nxvk, :backend, :call], ^events, %{count: 1},
                       %{callback: :map, path: :fallback}}
    end

    test "scans, sorting and windows run natively and agree with Nx.BinaryBackend" do
      Nxvk.Backend.reset_stats()

      a =
        Nx.tensor([
          [3.0, :nan, -0.0, 1.0, 0.0, 3.0],
          [2.0, 2.0, :neg_infinity, 5.0, :infinity, -1.0]
        ])

      i = Nx.tensor([[4, 1, 4, -2, 7, 1], [0, 0, 9, -9, 3, 3]], type: :s32)
      m = Nx.iota({4, 6}, type: :f32) |> Nx.multiply(0.5)

      checks = [
        {Nx.cumulative_sum(i, axis: 1), &Nx.cumulative_sum(&1, axis: 1), i},
        {Nx.cumulative_product(i, reverse: true), &Nx.cumulative_product(&1, reverse: true), i},
        {Nx.cumulative_max(a, axis: 1), &Nx.cumulative_max(&1, axis: 1), a},
        {Nx.cumulative_min(m, axis: 0, reverse: true),
         &Nx.cumulative_min(&1, axis: 0, reverse: true), m},
        {Nx.sort(a, axis: 1), &Nx.sort(&1, axis: 1), a},
        {Nx.sort(a, axis: 1, direction: :desc), &Nx.sort(&1, axis: 1, direction: :desc), a},
        {Nx.argsort(a, axis: 1, stable: true), &Nx.argsort(&1, axis: 1, stable: true), a},
        {Nx.argsort(i, axis: 1, direction: :desc, stable: true),
         &Nx.argsort(&1, axis: 1, direction: :desc, stable: true), i},
        {Nx.argsort(i, axis: 0, type: :u32), &Nx.argsort(&1, axis: 0, type: :u32), i},
        {Nx.window_max(m, {2, 2}, strides: [2, 2]), &Nx.window_max(&1, {2, 2}, strides: [2, 2]),
         m},
        {Nx.window_sum(m, {3, 2}, padding: :same), &Nx.window_sum(&1, {3, 2}, padding: :same), m},
        {Nx.window_min(i, {1, 2}, padding: [{0, 1}, {1, 0}], window_dilations: [1, 2]),
         &Nx.window_min(&1, {1, 2}, padding: [{0, 1}, {1, 0}], window_dilations: [1, 2]), i},
        {Nx.window_product(i, {2, 3}), &Nx.window_product(&1, {2, 3}), i}
      ]

      for {got, fun, x} <- checks do
        want = fun.(bin(x))
        assert got.type == want.type and got.shape == want.shape
        assert Nx.to_binary(got) == Nx.to_binary(want), "#{inspect(got)} vs #{inspect(want)}"
      end

      {v, k} = Nx.top_k(a, k: 3)
      {wv, wk} = Nx.top_k(bin(a), k: 3)
      assert Nx.to_binary(v) == Nx.to_binary(wv) and Nx.to_binary(k) == Nx.to_binary(wk)
      assert k.type == {:s, 64}

      stats = Nxvk.Backend.stats()

      for cb <- [
            :cumulative_sum,
            :cumulative_product,
            :cumulative_max,
            :cumulative_min,
            :sort,
            :argsort,
            :top_k,
            :window_max,
            :window_sum,
            :window_min,
            :window_product
          ] do
        assert %{native: n, fallback: 0} = stats[cb], "#{cb}: #{inspect(stats[cb])}"
        assert n >= 1
      end
    end

    test "window_scatter_max / window_scatter_min run natively and select as Nx.BinaryBackend" do
      Nxvk.Backend.reset_stats()

      a =
        Nx.tensor([
          [3.0, :nan, -0.0, 1.0, 0.0, 3.0],
          [2.0, 2.0, :neg_infinity, 0.0, :infinity, -1.0]
        ])

      i = Nx.tensor([[4, 1, 4, -2, 7, 1], [0, 4, 9, -9, 3, 3]], type: :s32)
      u = Nx.tensor([[1, 9, 9, 2, 0, 0], [9, 1, 2, 2, 0, 5]], type: :u8)
      s15 = Nx.tensor([[0.5, -1.25, 2.0, 4.0, 8.0], [1.0, 3.0, -2.0, 0.25, 16.0]])

      # valid padding: ties (the last wins), NaN, -0 / +0, overlapping
      # windows adding in order, another type for x than the source
      checks = [
        {&Nx.window_scatter_max(&1, s15, 0.0, {1, 2}, strides: [1, 1]), a},
        {&Nx.window_scatter_min(&1, s15, 1.5, {1, 2}, strides: [1, 1]), a},
        {&Nx.window_scatter_max(&1, Nx.tensor([[10, 20, 30]], type: :s32), 5, {2, 2},
           strides: [1, 2]
         ), i},
        {&Nx.window_scatter_min(&1, Nx.tensor([[10, 20], [30, 40]], type: :s32), -1, {1, 3},
           strides: [1, 3]
         ), i},
        {&Nx.window_scatter_max(&1, Nx.tensor([[1.5, 2.5, 3.5]]), 1, {2, 2}, strides: [2, 2]), u},
        {&Nx.window_scatter_min(&1, s15, 0, {1, 2}, strides: [1, 1]), u},
        # an integer x with a float init_value: compared as f32, as Nx pads it
        {&Nx.window_scatter_max(&1, Nx.tensor([[1, 2, 3]], type: :s32), 0.5, {2, 2},
           strides: [1, 2]
         ), i}
      ]

      for {fun, x} <- checks do
        got = fun.(x)
        want = fun.(bin(x))
        assert got.type == want.type and got.shape == want.shape
        assert Nx.to_binary(got) == Nx.to_binary(want), "#{inspect(got)} vs #{inspect(want)}"
      end

      # padding is never selected (XLA's select_and_scatter): window 3,
      # padding same on [1, 5, 3] puts every source on the 5
      # (Nx.BinaryBackend 0.7.3 writes them one place to the right)
      got =
        Nx.window_scatter_max(Nx.tensor([1, 5, 3]), Nx.tensor([10, 20, 30]), 0, {3},
          strides: [1],
          padding: :same
        )

      assert Nx.to_flat_list(got) == [0, 60, 0]
      # max pooling's gradient with padding
      x = Nx.iota({1, 1, 5, 5}, type: :f32)

      g =
        Nx.Defn.grad(x, fn x ->
          Nx.sum(Nx.window_max(x, {1, 1, 3, 3}, strides: [1, 1, 2, 2], padding: :same))
        end)

      want =
        for r <- 0..4, c <- 0..4, do: if(r in [1, 3, 4] and c in [1, 3, 4], do: 1.0, else: 0.0)

      assert Nx.to_flat_list(g) == want

      stats = Nxvk.Backend.stats()

      for cb <- [:window_scatter_max, :window_scatter_min] do
        assert %{native: n, fallback: 0} = stats[cb], "#{cb}: #{inspect(stats[cb])}"
        assert n >= 3
      end
    end

    test "a tensor is freed when garbage collected, and by backend_deallocate" do
      {:ok, _} = settle(1_000_000)
      before = live()

      pid =
        spawn(fn ->
          _t = Nx.iota({1000}, type: :f32, backend: Nxvk.Backend)
          receive do: (:go -> :ok)
        end)

      Process.sleep(50)
      assert live() == before + 1
      send(pid, :go)
      assert {:ok, _} = wait_stats(Nxvk.Server, &(&1["handles"] == before))

      t = Nx.iota({10}, type: :f32)
      assert live() == before + 1
      assert Nx.backend_deallocate(t) == :ok
      assert Nx.backend_deallocate(t) == :already_deallocated
      assert live() == before
    end

    test "a caller killed while its request is in flight leaves no handle behind" do
      big = Nx.iota({128, 128}, type: :f32)
      {_, _} = settle(1_000_000)
      before = live()

      for _ <- 1..10 do
        pid = spawn(fn -> Nx.dot(big, big) end)
        Process.sleep(1)
        Process.exit(pid, :kill)
      end

      # the replies nobody waits for any more: the server frees their handles
      assert {:ok, _} = settle(before)
      assert Nx.to_number(Nx.sum(big)) > 0
    end

    test "a Task's result stays valid after the Task ends" do
      t =
        Task.async(fn -> Nx.iota({4}, type: :f32, backend: Nxvk.Backend) |> Nx.multiply(2.0) end)
        |> Task.await()

      assert %Nxvk.Backend{handle: h} = t.data
      assert is_integer(h)
      :erlang.garbage_collect()
      Process.sleep(100)
      assert Nx.to_flat_list(t) == [0.0, 2.0, 4.0, 6.0]
    end

    test "100 000 Nx.add in a loop with no explicit frees leave live bytes flat" do
      x = Nx.tensor([1.0, 2.0, 3.0, 4.0])
      {:ok, _} = settle(1_000_000)
      h0 = live()
      b0 = live("handle_bytes")

      last =
        Enum.reduce(1..100_000, x, fn i, acc ->
          r = Nx.add(acc, 1.0)

          if rem(i, 25_000) == 0 do
            :erlang.garbage_collect()
            stats = ok!(Nxvk.Server.stats())
            # bounded by what the collector has not reached yet
            assert stats["handles"] < h0 + 5_000, inspect(stats)
          end

          r
        end)

      assert Nx.to_flat_list(last) == [100_001.0, 100_002.0, 100_003.0, 100_004.0]
      assert {:ok, %{"handles" => h, "handle_bytes" => b}} = settle(h0 + 2)
      assert h <= h0 + 2 and b <= b0 + 32
    end

    test "Nxvk.Compiler: softmax is one port request, grad works, unsupported nodes evaluate" do
      defmodule M do
        import Nx.Defn
        defn(softmax(t), do: Nx.exp(t) / Nx.sum(Nx.exp(t)))
        defn(loss(w, x), do: Nx.sum(Nx.tanh(Nx.dot(x, w))))
        defn(grad_loss(w, x), do: grad(w, &loss(&1, x)))
        defn(sorted(t), do: Nx.sort(t) + 1)
      end

      t = Nx.tensor([1.0, 2.0, 3.0])
      jit = Nx.Defn.jit(&M.softmax/1, compiler: Nxvk.Compiler)
      warm = jit.(t)
      # garbage device tensors from earlier work are freed by a batched
      # `free` request before the next request (Nxvk.GC): collect them now,
      # so that the stats request below sends them, not the counted run;
      # warm stays referenced until after s1 for the same reason
      :erlang.garbage_collect()
      s0 = ok!(Nxvk.Server.stats())["requests"]
      r = jit.(t)
      s1 = ok!(Nxvk.Server.stats())["requests"]
      # the run, and this stats request
      assert s1 - s0 == 2
      assert Nx.to_flat_list(warm) == Nx.to_flat_list(r)
      assert_close(Nx.to_flat_list(r), Nx.to_flat_list(M.softmax(bin(t))), 1.0e-6)

      w = Nx.iota({3, 2}, type: :f32) |> Nx.divide(10)
      x = Nx.iota({4, 3}, type: :f32) |> Nx.divide(10)
      got = Nx.Defn.jit(&M.grad_loss/2, compiler: Nxvk.Compiler).(w, x)
      want = Nx.Defn.jit(&M.grad_loss/2, compiler: Nx.Defn.Evaluator).(bin(w), bin(x))
      assert_close(Nx.to_flat_list(got), Nx.to_flat_list(want), 1.0e-5, 1.0e-6)

      before = Nxvk.Compiler.stats()

      assert Nx.to_flat_list(
               Nx.Defn.jit(&M.sorted/1, compiler: Nxvk.Compiler).(Nx.tensor([3.0, 1.0]))
             ) == [2.0, 4.0]

      assert Nxvk.Compiler.stats().evaluator == before.evaluator + 1
    end

    test "Nxvk.Compiler: a prepared graph runs as one exec naming handles; host inputs still run" do
      defmodule P do
        import Nx.Defn
        defn(affine(t, u), do: t * 2.5 + u - 1)
      end

      t = Nx.tensor([1.0, 2.0, 3.0])
      u = Nx.tensor([0.5, -4.0, 8.0])
      want = Nx.to_flat_list(P.affine(bin(t), bin(u)))
      jit = Nx.Defn.jit(&P.affine/2, compiler: Nxvk.Compiler)
      assert Nx.to_flat_list(jit.(t, u)) == want
      # the command of the request just before stats (frees of collected
      # tensors go out in batches, 20 ms after the last: let them go first)
      last_cmd = fn call ->
        :erlang.garbage_collect()
        Process.sleep(60)
        r = call.()
        {r, ok!(Nxvk.Server.stats())["last_ns"]["cmd"]}
      end

      # an exec: the graph and its two constants kept by the port
      {r, cmd} = last_cmd.(fn -> jit.(t, u) end)
      assert cmd == "exec"
      assert Nx.to_flat_list(r) == want
      # an input on the host: the full run, with its bytes
      {r, cmd} = last_cmd.(fn -> jit.(bin(t), u) end)
      assert cmd == "run"
      assert Nx.to_flat_list(r) == want
      # 200 calls: the constants are not put again, nothing accumulates
      {:ok, %{"handles" => h0}} = settle(1_000_000)

      for _ <- 1..200, do: jit.(t, u)

      assert {:ok, %{"handles" => h}} = settle(h0)
      assert h <= h0
    end

    test "early replies: a failed op's error surfaces, naming the op, at every use of each of its results" do
      # device 4 is a port whose exp fails on the device (NXVK_TEST_INJECT=fail_op:exp):
      # after inference, so an early reply has already answered with handles
      Application.put_env(:nxvk, :device_map, %{4 => 0})
      Application.put_env(:nxvk, :device_env, %{4 => [{"NXVK_TEST_INJECT", "fail_op:exp"}]})
      early = :persistent_term.get({Nxvk.Graph, :early}, nil)

      on_exit(fn ->
        Application.delete_env(:nxvk, :device_map)
        Application.delete_env(:nxvk, :device_env)

        if early == nil,
          do: :persistent_term.erase({Nxvk.Graph, :early}),
          else: :persistent_term.put({Nxvk.Graph, :early}, early)
      end)

      dev = {Nxvk.Backend, device: 4}
      x = Nx.tensor([1.0, 2.0, 3.0], backend: dev)
      named = ~r/ops\[\d+\] \(exp -> .*exp: failed on the device/

      # replies after the run: the call itself raises
      :persistent_term.put({Nxvk.Graph, :early}, false)
      assert_raise RuntimeError, named, fn -> Nx.exp(x) end

      # early replies: the call returns; the result's every use raises, naming exp
      :persistent_term.put({Nxvk.Graph, :early}, true)
      y = Nx.exp(x)
      assert %Nxvk.Backend{device: 4} = y.data
      stats = fn -> ok!(Nxvk.Server.stats(Nxvk.Backend.server(4))) end
      assert %{"early_failures" => f0} = stats.()
      assert f0 >= 1
      assert_raise RuntimeError, named, fn -> Nx.add(y, x) end
      assert_raise RuntimeError, named, fn -> Nx.multiply(y, 2) end
      assert_raise RuntimeError, named, fn -> Nx.to_binary(y) end
      assert_raise RuntimeError, named, fn -> Nx.backend_transfer(y, Nx.BinaryBackend) end
      assert_raise RuntimeError, named, fn -> Nx.to_flat_list(y) end
      # and a run that does not name it is unaffected
      assert Nx.to_flat_list(Nx.add(x, x)) == [2.0, 4.0, 6.0]

      # one compiled request with two results: both answer the failure
      both =
        Nx.Defn.jit(fn t -> {Nx.exp(t), Nx.add(t, 1)} end, compiler: Nxvk.Compiler, device: 4)

      {e, a} = both.(x)
      assert_raise RuntimeError, named, fn -> Nx.to_binary(a) end
      assert_raise RuntimeError, named, fn -> Nx.to_binary(e) end
      assert_raise RuntimeError, named, fn -> Nx.subtract(a, x) end
      assert %{"early_failures" => f1} = stats.()
      assert f1 > f0
      # with the port's early replies off again, the same request raises at the call
      :persistent_term.put({Nxvk.Graph, :early}, false)

      jit2 =
        Nx.Defn.jit(fn t -> {Nx.exp(t), Nx.add(t, 2)} end, compiler: Nxvk.Compiler, device: 4)

      assert_raise RuntimeError, named, fn -> jit2.(x) end
    end

    defp bin(t), do: Nx.backend_copy(t, Nx.BinaryBackend)
  end
end
