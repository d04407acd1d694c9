#meta
class Program_weight_tensor_meta_in_0:
	name = "in_0"
	original_name = "L_x_"
	shape = [2, 3, 4]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = -0.125
	std = 0.5


class Program_weight_tensor_meta_in_1:
	name = "in_1"
	shape = [2, 3, 4]
	dtype = "torch.bfloat16"
	min_val = 0
	max_val = 1.5
class B:
	name = "w_0"
	shape = [4]
	dtype = "torch.float32"
	data = [0.1, -0.2, 3e-3, 4.0]
class C:
	name = "w_1"
	shape = [4, 3, 1, 1]
	dtype = "torch.float32"
class D:
	name = "i"
	shape = [2]
	dtype = "torch.int64"
	mean = None
	std = None
	data = [[1], [2]]
